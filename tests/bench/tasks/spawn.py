# 200,000 threads started and joined, 100 at a time; prints the checksum,
# then the milliseconds they took.
import threading
import time

BATCHES = 2000
BATCH = 100


def main():
    start = time.perf_counter()
    total = 0
    for _ in range(BATCHES):
        out = [0] * BATCH
        ts = []
        for k in range(BATCH):
            def run(k=k):
                out[k] = k
            t = threading.Thread(target=run)
            t.start()
            ts.append(t)
        for k, t in enumerate(ts):
            t.join()
            total += out[k]
    ms = int((time.perf_counter() - start) * 1000)
    print(total)
    print("ms", ms)


main()
