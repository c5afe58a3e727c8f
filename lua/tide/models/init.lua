-- tide.models: pretrained model families, each loaded on first use (tide.models.bert).
local lazy = { bert = "tide.models.bert", SentenceEncoder = "tide.models.SentenceEncoder" }

return setmetatable({}, {
    __index = function(t, k)
        local name = lazy[k]
        if not name then
            return nil
        end
        local mod = require(name)
        rawset(t, k, mod)
        return mod
    end,
})
