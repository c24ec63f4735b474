def main():
    total = 0
    i = 0
    while i < 10000000:
        total += i % 7 * 3
        i += 1
    print(total)


main()
