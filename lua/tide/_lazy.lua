-- tide._lazy(t, lazy): t, whose fields named in lazy (name -> module) load on first use and
-- stay; the names also stand in the metatable's __lazy, for spec/public_api_spec.lua (the keys
-- of t, loaded or not). tide.nn's classes, tide.optim, tide.utils and tide.models use it. A
-- function in place of the module name installs the field itself (tide.nn.functional's files,
-- each defining several functions on F).
return function(t, lazy)
    return setmetatable(t, {
        __lazy = lazy,
        __index = function(self, k)
            local name = lazy[k]
            if type(name) == "function" then
                name()
                return rawget(self, k)
            elseif name then
                local mod = require(name)
                rawset(self, k, mod)
                return mod
            end
        end,
    })
end
