-- nn.CrossMapLRN2d(size[, {alpha = 1e-4, beta = 0.75, k = 1}]) (or size, alpha, beta, k):
-- PyTorch's legacy (Lua Torch) response normalization across channels of input {N, C, H, W}:
-- x / (k + alpha / size * s)^beta, s a running sum of x^2 over the channels, computed as
-- PyTorch 1.13's torch.nn._functions.CrossMapLRN2d does, whose window is not
-- LocalResponseNorm's: channel c sums channels max(1, c - p + 1) .. min(c + p - 1, C - 1) plus
-- channel 0 (0-based, p = floor((size - 1) / 2) + 1; channel 0 is never taken out of the running
-- sum). Its gradient is that class's hand-written backward, kept as it is so that training
-- matches PyTorch's: scale^-beta g - 2 alpha beta / size * x * the sum of g out / scale over
-- channels c - q .. c - q + size - 1 (q = floor((size + 1) / 2)), which is not the exact
-- derivative of the forward (PyTorch's fails gradcheck; with size 1 its backward raises).
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise
local idiv = require("tide._compat").idiv
local Module = require("tide.nn.Module")
local I = require("tide.nn._internal")
local FLOAT = require("tide.nn._args").FLOAT_DTYPES

local WHO = "CrossMapLRN2d"

local CrossMapLRN2d = Module:extend(WHO)

-- zeros of one channel of x {N, C, H, W}: {N, H, W}
local function zeros_plane(x)
    return core.zeros({ x:size(1), x:size(3), x:size(4) }, { dtype = x.dtype, device = x.device })
end

-- PyTorch's backward, one channel at a time as it runs (a running sum over the window)
autograd.def {
    name = "cross_map_lrn2d",
    reads = { 1, "out" },
    frees = { "scale" },
    backward = function(nd, g)
        local x, out, scale = nd[1], nd.out, nd.scale
        local size, alpha, beta = nd.size, nd.alpha, nd.beta
        local C = x:size(2)
        local ratio = g:mul(out):div(scale)
        local q = idiv(size + 1, 2)
        -- the padded ratios' channel p (0-based) is ratio's p - q, zero outside
        local function padded(p)
            local c = p - q
            if c < 0 or c >= C then
                return nil
            end
            return ratio:select(2, c + 1)
        end
        local accum = zeros_plane(ratio)
        for p = 0, size - 2 do
            local r = padded(p)
            if r then
                accum = accum:add(r)
            end
        end
        local coef = -2 * alpha * beta / size
        local gi = scale:pow(-beta):mul(g)
        local rows = {}
        for c = 0, C - 1 do
            local r = padded(c + size - 1)
            if r then
                accum = accum:add(r)
            end
            rows[c + 1] = gi:select(2, c + 1):add(x:select(2, c + 1):mul(coef):mul(accum))
            r = padded(c)
            if r then
                accum = accum:sub(r)
            end
        end
        return core.stack(rows, 2)
    end,
}

local function number(v, default, what)
    if v == nil then
        return default
    end
    if type(v) ~= "number" or v ~= v then
        raise(string.format("tide: %s: expected %s to be a number, got %s", WHO, what,
            tostring(v)))
    end
    return v
end

function CrossMapLRN2d:init(size, alpha, beta, k)
    self.size = I.check_int(size, "size", WHO)
    if type(alpha) == "table" then
        core._check_options(alpha, WHO, { "alpha", "beta", "k" })
        alpha, beta, k = alpha.alpha, alpha.beta, alpha.k
    end
    self.alpha = number(alpha, 1e-4, "alpha")
    self.beta = number(beta, 0.75, "beta")
    self.k = number(k, 1, "k")
end

-- the scale k + alpha / size * (PyTorch's running sum of x^2), without recording
local function scale_of(x, size, alpha, k)
    local C = x:size(2)
    local sq = x:mul(x)
    local pre = idiv(size - 1, 2) + 1
    local rows = {}
    local s = zeros_plane(sq)
    for c = 0, math.min(pre, C) - 1 do
        s = s:add(sq:select(2, c + 1))
    end
    rows[1] = s
    for c = 1, C - 1 do
        if c < C - pre + 1 then
            s = s:add(sq:select(2, c + pre))
        end
        if c > pre then
            s = s:sub(sq:select(2, c - pre + 1))
        end
        rows[c + 1] = s
    end
    return core.stack(rows, 2):mul(alpha / size):add(k)
end

function CrossMapLRN2d:forward(x)
    I.check_tensor(x, WHO)
    if x:dim() ~= 4 then
        raise(string.format("tide: %s: expected input {N, C, H, W}, got %s", WHO,
            I.shape_str(x.shape)))
    end
    if not FLOAT[x.dtype] then
        raise("tide: " .. WHO .. ": expected a floating-point input, got " .. x.dtype)
    end
    local size, alpha, beta = self.size, self.alpha, self.beta
    local scale, out = autograd.no_grad(function()
        local s = scale_of(x, size, alpha, self.k)
        return s, s:pow(-beta):mul(x)
    end)
    if autograd.needs_record(x) then
        local nd = autograd.record("cross_map_lrn2d", out, x)
        nd.scale, nd.size, nd.alpha, nd.beta = scale, size, alpha, beta
    end
    return out
end

function CrossMapLRN2d:extra_repr()
    return string.format("%d, alpha=%s, beta=%s, k=%s", self.size, tostring(self.alpha),
        tostring(self.beta), tostring(self.k))
end

require("tide.nn._signature").define(CrossMapLRN2d, { names = { "size", "alpha", "beta", "k" },
    required = 1, flat = true })

return CrossMapLRN2d
