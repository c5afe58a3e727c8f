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

-- one class: obj is an instance of cls or of a class extended from it (an instance's metatable
-- is its class, a subclass's metatable leads to its base through __index); a tensor is an
-- instance of tide.Tensor
local function is_one(obj, cls)
    local check = rawget(cls, "__instancecheck") -- Python's __instancecheck__ (nn.Parameter)
    if check ~= nil then
        return check(cls, obj) == true
    end
    if type(obj) ~= "table" then
        local core = require("tide.core")
        return cls == core.Tensor and core.is_tensor(obj)
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

local function describe(v)
    if type(v) == "string" then
        return string.format("the string %q", v)
    end
    return type(v) == "nil" and "nil" or (type(v) .. " " .. tostring(v))
end

-- is_instance(obj, cls): Python's isinstance for tide's classes. cls is a class, or a list of
-- classes (Python's tuple: isinstance(m, (nn.Linear, nn.Embedding)) is
-- tide.isinstance(m, {nn.Linear, nn.Embedding}), true when obj is an instance of any; lists may
-- nest, {} is false). A class has a metatable (Module:extend, tide._class.class), a list has none.
function M.is_instance(obj, cls)
    if type(cls) ~= "table" then
        error("tide: isinstance: cls must be a class or a list of classes, got " .. describe(cls)
            .. " (a class name misspelled? Python's tuple of classes is a list: "
            .. "tide.isinstance(m, {nn.Linear, nn.Embedding}))", 2)
    end
    if getmetatable(cls) == nil and (rawget(cls, 1) ~= nil or next(cls) == nil) then
        for i = 1, #cls do
            if type(cls[i]) ~= "table" then
                error("tide: isinstance: the list of classes holds " .. describe(cls[i])
                    .. " at position " .. i .. "; each entry must be a class (nn.Linear, ...)", 2)
            end
        end
        for i = 1, #cls do
            if M.is_instance(obj, cls[i]) then
                return true
            end
        end
        return false
    end
    return is_one(obj, cls)
end

return M
