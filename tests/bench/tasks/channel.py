# A million small messages between two threads through a queue.Queue of
# 1024; prints the checksum, then the milliseconds the messages took.
import queue
import threading
import time

N = 1000000


def produce(q, n):
    for i in range(n):
        q.put(i)
    q.put(None)


def consume(q, out):
    total = 0
    v = q.get()
    while v is not None:
        total += v
        v = q.get()
    out.append(total)


def main():
    start = time.perf_counter()
    q = queue.Queue(maxsize=1024)
    out = []
    p = threading.Thread(target=produce, args=(q, N))
    c = threading.Thread(target=consume, args=(q, out))
    p.start()
    c.start()
    c.join()
    p.join()
    ms = int((time.perf_counter() - start) * 1000)
    print(out[0])
    print("ms", ms)


main()
