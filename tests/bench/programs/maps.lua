local hits = 0
for round = 1, 10 do
    local m = {}
    for i = 0, 199999 do
        m["k" .. tostring(i)] = i
    end
    for i = 0, 199999 do
        if m["k" .. tostring(i * 2)] ~= nil then
            hits = hits + m["k" .. tostring(i)] % 3
        end
    end
end
print(hits)
