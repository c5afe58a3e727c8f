-- tide._class: how tide's plain Lua classes are made callable (nn's Module has its own extend,
-- which also copies metamethods). A class is its instances' metatable.
local M = {}

-- cls(...) makes an instance with cls.new(cls, ...); what cls lacks comes from base (nil for a
-- root class): the classes of Optimizer:extend, LRScheduler:extend and Dataset:extend
function M.class(cls, base)
    return setmetatable(cls, {
        __index = base,
        __call = function(c, ...)
            return c.new(c, ...)
        end,
    })
end

-- cls(...) is cls.new(...): the classes without subclasses (DataLoader, the schedulers that
-- drive other schedulers, ...)
function M.callable(cls)
    return setmetatable(cls, {
        __call = function(_, ...)
            return cls.new(...)
        end,
    })
end

return M
