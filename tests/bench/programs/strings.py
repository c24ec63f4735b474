def main():
    total = 0
    for _ in range(60):
        s = ""
        for i in range(100000):
            s += str(i)
            s += ","
        total += len(s)
    print(total)


main()
