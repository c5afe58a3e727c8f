-- tide.distributions._kl_registry: register_kl(P, Q)(fn), PyTorch's decorator: fn(p, q)
-- becomes kl_divergence's closed form for p of class P (or a subclass) and q of class Q (or a
-- subclass); a pair registered again replaces the one before. kl.lua's dispatch walks both
-- classes' bases and takes the most specific pair (p's class first, then q's: PyTorch's
-- lexicographic match), the registered pairs before the built-in ones of the same classes.
-- Also here: the closed forms through _Expanded (a base broadcast by TransformedDistribution),
-- the unbroadcast bases' divergence broadcast.
local autograd = require("tide.autograd")
local raise = autograd.raise

local R = {}
local REGISTRY = {} -- [P][Q] = fn

-- whether c is a distribution class (Distribution or made by its extend)
local function is_class(c)
    if type(c) ~= "table" or rawget(c, "__index") ~= c then
        return false
    end
    local Distribution = require("tide.distributions.Distribution")
    local k = c
    while type(k) == "table" do
        if k == Distribution then
            return true
        end
        local mt = getmetatable(k)
        k = mt and rawget(mt, "__index")
    end
    return false
end

local function shown(v)
    if autograd.is_tensor(v) then
        return "a tensor"
    end
    if type(v) == "table" and getmetatable(v) and rawget(v, "__index") ~= v and
        getmetatable(v).__name then
        return "a " .. tostring(getmetatable(v).__name) .. " instance (give its class)"
    end
    return type(v)
end

function R.register_kl(P, Q, ...)
    local who = "register_kl"
    require("tide.op_args").no_extra(who, 2, ...)
    if not is_class(P) then
        raise(("tide: %s: P must be a distribution class such as tide.distributions.Normal, " ..
            "got %s"):format(who, shown(P)))
    end
    if not is_class(Q) then
        raise(("tide: %s: Q must be a distribution class such as tide.distributions.Normal, " ..
            "got %s"):format(who, shown(Q)))
    end
    return function(fn, ...)
        require("tide.op_args").no_extra(who, 1, ...)
        if type(fn) ~= "function" then
            raise(("tide: %s(%s, %s): expected a function (p, q) -> tensor, got %s"):format(who,
                P.__name, Q.__name, type(fn)))
        end
        REGISTRY[P] = REGISTRY[P] or {}
        REGISTRY[P][Q] = fn
        return fn
    end
end

-- the registered fn of the classes P and Q, or nil
function R.find(P, Q)
    return REGISTRY[P] and REGISTRY[P][Q]
end

-- d's class, then its bases, to Distribution
function R.classes(d)
    local out = {}
    local c = getmetatable(d)
    while type(c) == "table" and rawget(c, "__name") do
        out[#out + 1] = c
        local mt = getmetatable(c)
        c = mt and rawget(mt, "__index")
    end
    return out
end

-- the built-in pairs made through this registry
local Distribution = require("tide.distributions.Distribution")
local Expanded = require("tide.distributions._expanded")
local U = require("tide.distributions.transforms._util")

local function through_expanded(p, q)
    local bp = getmetatable(p) == Expanded and p.base_dist or p
    local bq = getmetatable(q) == Expanded and q.base_dist or q
    local r = require("tide.distributions.kl")(bp, bq)
    return r:expand(U.broadcast_shapes("kl_divergence", r:size(), p.batch_shape, q.batch_shape))
end
R.register_kl(Expanded, Distribution)(through_expanded)
R.register_kl(Distribution, Expanded)(through_expanded)

return R
