def main():
    hits = 0
    for _ in range(10):
        m = {}
        for i in range(200000):
            m["k" + str(i)] = i
        for i in range(200000):
            if ("k" + str(i * 2)) in m:
                hits += m["k" + str(i)] % 3
    print(hits)


main()
