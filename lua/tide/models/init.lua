-- tide.models: pretrained model families, each loaded on first use (tide.models.bert).
local lazy = { bert = "tide.models.bert", SentenceEncoder = "tide.models.SentenceEncoder" }

return setmetatable({}, {
    __lazy = lazy, -- the names above, for spec/public_api_spec.lua
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
