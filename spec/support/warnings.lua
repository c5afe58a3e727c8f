-- warnings.lua — the warnings tide writes to io.stderr while f runs, caught instead of printed
-- (tide._warn's "tide: warning: ..." lines, PyTorch's UserWarnings). f's error, if any, is
-- raised again once io.stderr is back.
--
--     local text, lines, r = require("spec.support.warnings")(function() return x:op() end)
local pack = table.pack or function(...) return { n = select("#", ...), ... } end
local unpack = table.unpack or unpack -- luacheck: ignore

return function(f, ...)
    local lines, saved = {}, io.stderr
    io.stderr = { write = function(_, s) lines[#lines + 1] = s end } -- luacheck: ignore
    local r = pack(pcall(f, ...))
    io.stderr = saved -- luacheck: ignore
    assert(r[1], r[2])
    return table.concat(lines), lines, unpack(r, 2, r.n)
end
