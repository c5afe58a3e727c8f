-- tide.nn._activation: the activation modules that differ only in their name, numeric
-- parameters and function, out of the users' sight. Each returns a class (Module:extend(name)).
local core = require("tide.core")
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local F = require("tide.nn.functional")

local A = {}

-- x:method() (GELU, Sigmoid, Tanh)
function A.method(name, method)
    local cls = Module:extend(name)
    function cls:forward(x)
        I.check_tensor(x, name)
        return x[method](x)
    end
    return cls
end

-- F[fn](x, {inplace = true}) when built with {inplace = true}, else x:method() when given
-- (ReLU) or F[fn](x) (SiLU)
function A.inplace(name, fn, method)
    local cls = Module:extend(name)
    function cls:init(opts)
        if opts ~= nil then
            core._check_options(opts, name, { "inplace" })
            self.inplace = opts.inplace
        end
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        if self.inplace then
            return F[fn](x, { inplace = self.inplace })
        end
        if method then
            return x[method](x)
        end
        return F[fn](x)
    end
    return cls
end

-- x:method(dim), dim -1 unless given (Softmax, LogSoftmax)
function A.along_dim(name, method)
    local cls = Module:extend(name)
    function cls:init(dim)
        self.dim = dim or -1
    end
    function cls:forward(x)
        I.check_tensor(x, name)
        return x[method](x, self.dim)
    end
    function cls:extra_repr()
        return "dim " .. self.dim
    end
    return cls
end

-- F[fn](x, {<param> = ..., inplace =}) with params the numbers ({name, default} pairs) given in
-- order or in an options table, which also takes inplace when `inplace` (ELU, LeakyReLU,
-- Softplus)
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
        local args = { ... }
        local o = args[1]
        if type(o) == "table" then
            core._check_options(o, name, keys)
            if inplace then
                self.inplace = o.inplace
            end
            for i, p in ipairs(params) do
                args[i] = o[p[1]]
            end
        end
        for i, p in ipairs(params) do
            self[p[1]] = I.check_number(args[i], p[2], p[1], name)
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
    function cls:extra_repr()
        local parts = {}
        for i, p in ipairs(params) do
            parts[i] = p[1] .. " " .. self[p[1]]
        end
        return table.concat(parts, ", ")
    end
    return cls
end

return A
