-- tide.nn._activation: the activation modules that differ only in their name, numeric
-- parameters and function, out of the users' sight. Each returns a class (Module:extend(name)).
local core = require("tide.core")
local compat = require("tide._compat")
local raise = require("tide.autograd").raise
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")
local C = require("tide.nn._args")

local A = {}

-- the constructor's arguments as PyTorch takes them: `names` by position, then optionally a
-- table by name for the rest (C.positional); the keys checked against names
local function constructor_options(name, names, ...)
    local o = C.positional(name, 0, names, ...)
    core._check_options(o, name, names)
    return o
end
A.constructor_options = constructor_options

local function inplace_flag(v, name)
    if v ~= nil and type(v) ~= "boolean" then
        raise("tide: " .. name .. ": expected inplace to be a boolean, got " .. type(v))
    end
    return v == true -- PyTorch's attribute: false unless given
end
A.inplace_flag = inplace_flag

-- x:method() (Sigmoid, Tanh): no arguments
function A.method(name, method)
    local cls = Module:extend(name)
    function cls:init(...)
        require("tide.op_args").no_extra(name, 0, ...)
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        return x[method](x)
    end
    return cls
end

-- the functions of A.inplace's modules that take no inplace option (PyTorch's modules take
-- none): written into x by I.inplace
local NO_INPLACE_OPTION = { logsigmoid = true, softsign = true }

-- F[fn](x, {inplace = true}) when built with inplace (PyTorch's positional boolean, or
-- {inplace = true}), else x:method() when given (ReLU) or F[fn](x) (SiLU)
function A.inplace(name, fn, method)
    local cls = Module:extend(name)
    function cls:init(...)
        local o = constructor_options(name, { "inplace" }, ...)
        self.inplace = inplace_flag(o.inplace, name)
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        if self.inplace and NO_INPLACE_OPTION[fn] then
            return I.inplace(x, F[fn], name)
        elseif self.inplace then
            return F[fn](x, { inplace = self.inplace })
        end
        if method then
            return x[method](x)
        end
        return F[fn](x)
    end
    function cls:extra_repr() -- PyTorch's: "inplace=true" when set, else nothing
        return self.inplace and "inplace=true" or ""
    end
    return cls
end

-- x:method(dim), dim -1 unless given, by position or as {dim =} (Softmax, LogSoftmax)
function A.along_dim(name, method)
    local cls = Module:extend(name)
    function cls:init(...)
        local dim = constructor_options(name, { "dim" }, ...).dim
        if dim ~= nil and not compat.is_integer(dim) then
            raise("tide: " .. name .. ": expected dim to be an integer, got " .. tostring(dim))
        end
        self.dim = dim -- nil: PyTorch's implicit choice at each call (nn.functional's)
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        if self.dim == nil then
            return require("tide.nn.functional")[method](x)
        end
        return x[method](x, self.dim)
    end
    function cls:extra_repr() -- PyTorch's
        return "dim=" .. tostring(self.dim)
    end
    return cls
end

-- F[fn](x, {<param> = ..., inplace =}) with params the numbers ({name, default} pairs) and then
-- inplace when `inplace`, in PyTorch's order, by position or by name (ELU(1.0, true),
-- LeakyReLU(0.2, {inplace = true}), Softplus({beta = 2}))
function A.parametric(name, params, fn, inplace)
    local keys = {}
    for i, p in ipairs(params) do
        keys[i] = p[1]
    end
    if inplace then
        keys[#keys + 1] = "inplace"
    end
    local cls = Module:extend(name)
    function cls:init(...)
        local o = constructor_options(name, keys, ...)
        if inplace then
            self.inplace = inplace_flag(o.inplace, name)
        end
        for _, p in ipairs(params) do
            self[p[1]] = I.check_number(o[p[1]], p[2], p[1], name)
        end
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        local o = { inplace = self.inplace }
        for _, p in ipairs(params) do
            o[p[1]] = self[p[1]]
        end
        return F[fn](x, o)
    end
    function cls:extra_repr() -- PyTorch's: "alpha=1.0, inplace=true", Hardshrink's "0.5"
        if name == "Hardshrink" or name == "Softshrink" then
            return tostring(self.lambd)
        end
        local parts = {}
        for i, p in ipairs(params) do
            parts[i] = p[1] .. "=" .. tostring(self[p[1]])
        end
        if self.inplace then
            parts[#parts + 1] = "inplace=true"
        end
        return table.concat(parts, ", ")
    end
    return cls
end

return A
