local total = 0
for round = 1, 60 do
    local parts = {}
    for i = 0, 99999 do
        parts[#parts + 1] = tostring(i)
        parts[#parts + 1] = ","
    end
    total = total + #table.concat(parts)
end
print(total)
