def main():
    check = 0
    for rnd in range(10):
        l = []
        x = rnd + 1
        for i in range(200000):
            x = (x * 1103515245 + 12345) % 2147483648
            l.append(x)
        l.sort()
        check += l[100000] % 1000
    print(check)


main()
