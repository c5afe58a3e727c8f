-- fortunes.lua — the fortunes the BERT benchmarks read, by bench/bert_encode.py's rule (its
-- read_fortunes and sample), so that tide and its references see the same sentences.
local M = {}

--- every fortune of the plain-text files of dir (not .dat, not .u8, not folders), files in name
-- order, each stripped of ASCII whitespace at both ends
function M.read(dir)
    local names = {}
    local ls = io.popen("ls -1 '" .. dir .. "' 2>/dev/null")
    for name in ls:lines() do
        local sub = io.open(dir .. "/" .. name .. "/.", "rb")
        if sub then
            sub:close()
        elseif not name:match("%.dat$") and not name:match("%.u8$") then
            names[#names + 1] = name
        end
    end
    ls:close()
    table.sort(names)
    local out = {}
    for _, name in ipairs(names) do
        local f = assert(io.open(dir .. "/" .. name, "rb"))
        local text = "\n" .. f:read("a")
        f:close()
        local pos = 1
        while pos <= #text + 1 do
            local a, b = text:find("\n%\n", pos, true)
            local piece = text:sub(pos, (a or #text + 1) - 1):match("^%s*(.-)%s*$")
            if piece ~= "" and piece ~= "%" then
                out[#out + 1] = piece
            end
            if not a then
                break
            end
            pos = b + 1
        end
    end
    return out
end

--- n fortunes spread evenly over list (all of them when n is 0 or not below #list)
function M.sample(list, n)
    if n <= 0 or n >= #list then
        return list
    end
    local out = {}
    for k = 0, n - 1 do
        out[k + 1] = list[k * #list // n + 1]
    end
    return out
end

return M
