local check = 0
for round = 0, 9 do
    local l = {}
    local x = round + 1
    for i = 1, 200000 do
        x = (x * 1103515245 + 12345) % 2147483648
        l[i] = x
    end
    table.sort(l)
    check = check + l[100001] % 1000
end
print(check)
