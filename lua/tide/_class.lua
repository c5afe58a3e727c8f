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

-- is_instance(obj, cls): obj is an instance of cls or of a class extended from it (Python's
-- isinstance for tide's classes: an instance's metatable is its class, a subclass's metatable
-- leads to its base through __index); a tensor is an instance of tide.Tensor
function M.is_instance(obj, cls)
    if type(obj) ~= "table" then
        local core = require("tide.core")
        return cls ~= nil and cls == core.Tensor and core.is_tensor(obj)
    end
    local c = getmetatable(obj)
    while type(c) == "table" do
        if c == cls then
            return true
        end
        local mt = getmetatable(c)
        c = mt and rawget(mt, "__index")
    end
    return false
end

return M
