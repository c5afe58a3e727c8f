-- tide.nn.init: PyTorch 1.13's weight initializers. Each fills its tensor in place, on the
-- tensor's device and in its dtype, without recording a gradient, and returns it:
--
--     nn.init.kaiming_uniform_(layer.weight, {a = math.sqrt(5)})
--     nn.init.xavier_normal_(w, nn.init.calculate_gain("tanh"))
--
-- Arguments are PyTorch's, positional, or by name in an options table given last
-- (uniform_(t, {a =, b =}), kaiming_normal_(t, {a =, mode =, nonlinearity =})).
-- Fans follow PyTorch: fan_in = size(2) * receptive field, fan_out = size(1) * receptive
-- field, the receptive field being the product of the sizes past the second.
local compat = require("tide._compat")
local core = require("tide.core")
local autograd = require("tide.autograd")
local raise = autograd.raise

local init = {}

-- the positional and named arguments of `who` as values in the order of names
local function args(who, names, defaults, t, ...)
    if not autograd.is_tensor(t) then
        raise("tide: nn.init." .. who .. ": expected a tensor, got " .. type(t))
    end
    local n = select("#", ...)
    local pos = { ... }
    local named = {}
    if n > 0 and type(pos[n]) == "table" then
        named = pos[n]
        core._check_options(named, "nn.init." .. who, names)
        pos[n] = nil
        n = n - 1
    end
    if n > #names then
        raise(string.format("tide: nn.init.%s: expected at most %d arguments after the tensor, " ..
            "got %d", who, #names, n))
    end
    local out = {}
    for i, name in ipairs(names) do
        local v = pos[i]
        if named[name] ~= nil then
            v = named[name]
        end
        if v == nil then
            v = defaults[i]
        end
        out[i] = v
    end
    return compat.unpack(out, 1, #names)
end

local function number(who, name, v)
    if type(v) ~= "number" then
        raise(string.format("tide: nn.init.%s: expected %s to be a number, got %s", who, name,
            type(v)))
    end
    return v
end

-- runs fill(t) with grad mode off (parameters that require grad accept in-place fills then)
local function filling(t, fill, ...)
    local prev = core.set_grad_enabled(false)
    local ok, err = pcall(fill, t, ...)
    core.set_grad_enabled(prev)
    if not ok then
        error(err, 0)
    end
    return t
end

-- ---- gains and fans ----

local LINEAR = { linear = true, conv1d = true, conv2d = true, conv3d = true,
    conv_transpose1d = true, conv_transpose2d = true, conv_transpose3d = true, sigmoid = true }

-- calculate_gain(nonlinearity[, param]): the recommended gain for a nonlinearity
function init.calculate_gain(nonlinearity, param)
    if LINEAR[nonlinearity] then
        return 1
    elseif nonlinearity == "tanh" then
        return 5.0 / 3
    elseif nonlinearity == "relu" then
        return math.sqrt(2.0)
    elseif nonlinearity == "leaky_relu" then
        local slope = 0.01
        if param ~= nil then
            if type(param) ~= "number" then
                raise("tide: nn.init.calculate_gain: negative_slope " .. tostring(param) ..
                    " is not a valid number")
            end
            slope = param
        end
        return math.sqrt(2.0 / (1 + slope ^ 2))
    elseif nonlinearity == "selu" then
        return 3.0 / 4
    end
    raise("tide: nn.init.calculate_gain: unsupported nonlinearity " .. tostring(nonlinearity) ..
        "; use linear, conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, " ..
        "conv_transpose3d, sigmoid, tanh, relu, leaky_relu or selu")
end

local function fans(t, who)
    local shape = t.shape
    if #shape < 2 then
        raise(string.format("tide: nn.init.%s: fan in and fan out cannot be computed for a " ..
            "tensor with fewer than 2 dimensions (shape {%s})", who, table.concat(shape, ", ")))
    end
    local receptive = 1
    for i = 3, #shape do
        receptive = receptive * shape[i]
    end
    return shape[2] * receptive, shape[1] * receptive
end

local function empty(t)
    return t:numel() == 0 -- PyTorch: initializing a zero-element tensor does nothing
end

-- ---- the initializers ----

function init.uniform_(t, ...)
    local a, b = args("uniform_", { "a", "b" }, { 0.0, 1.0 }, t, ...)
    number("uniform_", "a", a)
    number("uniform_", "b", b)
    return filling(t, t.uniform_, a, b)
end

function init.normal_(t, ...)
    local mean, std = args("normal_", { "mean", "std" }, { 0.0, 1.0 }, t, ...)
    number("normal_", "mean", mean)
    number("normal_", "std", std)
    return filling(t, t.normal_, mean, std)
end

function init.constant_(t, ...)
    local val = args("constant_", { "val" }, {}, t, ...)
    number("constant_", "val", val)
    return filling(t, t.fill_, val)
end

function init.zeros_(t)
    args("zeros_", {}, {}, t)
    return filling(t, t.zero_)
end

function init.ones_(t)
    args("ones_", {}, {}, t)
    return filling(t, t.fill_, 1)
end

function init.xavier_uniform_(t, ...)
    local gain = number("xavier_uniform_", "gain", args("xavier_uniform_", { "gain" }, { 1.0 },
        t, ...))
    local fan_in, fan_out = fans(t, "xavier_uniform_")
    if empty(t) then
        return t
    end
    local bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / (fan_in + fan_out))
    return filling(t, t.uniform_, -bound, bound)
end

function init.xavier_normal_(t, ...)
    local gain = number("xavier_normal_", "gain", args("xavier_normal_", { "gain" }, { 1.0 },
        t, ...))
    local fan_in, fan_out = fans(t, "xavier_normal_")
    if empty(t) then
        return t
    end
    return filling(t, t.normal_, 0, gain * math.sqrt(2.0 / (fan_in + fan_out)))
end

-- the std of kaiming_*: gain(nonlinearity, a) / sqrt(fan of the mode)
local function kaiming_std(who, t, ...)
    local a, mode, nonlinearity = args(who, { "a", "mode", "nonlinearity" },
        { 0, "fan_in", "leaky_relu" }, t, ...)
    number(who, "a", a)
    if mode ~= "fan_in" and mode ~= "fan_out" then
        raise(string.format('tide: nn.init.%s: mode %s is not supported; use "fan_in" or ' ..
            '"fan_out"', who, tostring(mode)))
    end
    local fan_in, fan_out = fans(t, who)
    if empty(t) then
        return nil
    end
    local gain = init.calculate_gain(nonlinearity, a)
    return gain / math.sqrt(mode == "fan_in" and fan_in or fan_out)
end

function init.kaiming_uniform_(t, ...)
    local std = kaiming_std("kaiming_uniform_", t, ...)
    if not std then
        return t
    end
    local bound = math.sqrt(3.0) * std
    return filling(t, t.uniform_, -bound, bound)
end

function init.kaiming_normal_(t, ...)
    local std = kaiming_std("kaiming_normal_", t, ...)
    if not std then
        return t
    end
    return filling(t, t.normal_, 0, std)
end

-- orthonormal columns of the m x n (m >= n) matrix a (a Lua list of rows), by modified
-- Gram-Schmidt run twice (the second pass restores orthogonality lost to rounding). Each
-- column keeps the sign that a QR with a positive diagonal of R gives, as PyTorch's
-- q * sign(diag(r)) does.
local function orthonormal_columns(a, m, n)
    local q = {}
    for j = 1, n do
        local v = {}
        for i = 1, m do
            v[i] = a[i][j]
        end
        for _ = 1, 2 do
            for k = 1, j - 1 do
                local qk, d = q[k], 0
                for i = 1, m do
                    d = d + qk[i] * v[i]
                end
                for i = 1, m do
                    v[i] = v[i] - d * qk[i]
                end
            end
        end
        local norm = 0
        for i = 1, m do
            norm = norm + v[i] * v[i]
        end
        norm = math.sqrt(norm)
        for i = 1, m do
            v[i] = v[i] / norm
        end
        q[j] = v
    end
    return q
end

-- orthogonal_(t[, gain]): t viewed as size(1) x (numel / size(1)) gets orthonormal rows or
-- columns (whichever are fewer), from a QR of a standard normal matrix, times gain
function init.orthogonal_(t, ...)
    local gain = number("orthogonal_", "gain", args("orthogonal_", { "gain" }, { 1.0 }, t, ...))
    if t:dim() < 2 then
        raise(string.format("tide: nn.init.orthogonal_: only tensors with 2 or more dimensions " ..
            "are supported, got shape {%s}", table.concat(t.shape, ", ")))
    end
    if empty(t) then
        return t
    end
    local rows = t:size(1)
    local cols = compat.idiv(t:numel(), rows)
    local wide = rows < cols
    -- drawn on the host from tide's generator, so tide.manual_seed fixes the result
    local g = core.randn({ rows, cols }, { dtype = "float64", device = "cpu" })
    if wide then
        g = g:t():contiguous()
    end
    local m, n = math.max(rows, cols), math.min(rows, cols)
    local q = orthonormal_columns(g:totable(), m, n)
    local out = {}
    for r = 1, rows do
        local row = {}
        for c = 1, cols do
            -- q holds the columns of the m x n factor; wide tensors take its transpose
            local v = wide and q[r][c] or q[c][r]
            row[c] = v * gain
        end
        out[r] = row
    end
    local src = core.tensor(out, { dtype = "float64", device = "cpu" })
    return filling(t, function(dst)
        dst:copy_(src:to(dst.dtype):to(dst.device):view(dst.shape))
    end)
end

return init
