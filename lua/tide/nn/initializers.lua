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

local P = require("tide.pytorch_args")
local is_complex = require("tide.complex.tensor").is
local init = {}

-- the positional and named arguments of `who` as values in the order of names. t may be
-- complex (a complex parameter): its own uniform_, normal_, fill_, zero_ and copy_ fill it as
-- PyTorch's do, and its fans are those of its complex shape
local function args(who, names, defaults, t, ...)
    if not autograd.is_tensor(t) and not is_complex(t) then
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

-- the initializers that draw or index a real tensor's elements: a complex one raises
local function real_only(who, t)
    if is_complex(t) then
        raise(("tide: nn.init.%s: expected a real tensor, got a %s one; initialize its real " ..
            "pair, nn.init.%s(tide.view_as_real(w))"):format(who, t.dtype, who))
    end
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
function init.calculate_gain(nonlinearity, param, ...)
    local o = P.merge("nn.init.calculate_gain", { "nonlinearity", "param" }, nonlinearity,
        param, ...) -- (PyTorch's keywords: calculate_gain("leaky_relu", {param = 0.2}))
    for key in pairs(o or {}) do
        if key ~= "nonlinearity" and key ~= "param" then
            error(("tide: nn.init.calculate_gain: unknown option %s; it takes nonlinearity " ..
                "and param"):format(key), 2)
        end
    end
    nonlinearity, param = o and o.nonlinearity, o and o.param
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

-- PyTorch's private helpers that timm, torchvision and many scripts call:
-- nn.init._calculate_fan_in_and_fan_out(tensor) -> fan_in, fan_out (two values, Python's tuple)
-- and nn.init._calculate_correct_fan(tensor, mode) -> the fan of mode "fan_in" or "fan_out"
function init._calculate_fan_in_and_fan_out(t)
    if not autograd.is_tensor(t) then
        raise(string.format("tide: nn.init._calculate_fan_in_and_fan_out: expected a tensor, " ..
            "got %s", type(t)))
    end
    return fans(t, "_calculate_fan_in_and_fan_out")
end

function init._calculate_correct_fan(t, mode)
    local who = "_calculate_correct_fan"
    if not autograd.is_tensor(t) then
        raise(string.format("tide: nn.init.%s: expected a tensor, got %s", who, type(t)))
    end
    if mode ~= "fan_in" and mode ~= "fan_out" then
        raise(string.format('tide: nn.init.%s: mode %s is not supported; use "fan_in" or ' ..
            '"fan_out"', who, tostring(mode)))
    end
    local fan_in, fan_out = fans(t, who)
    return mode == "fan_in" and fan_in or fan_out
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

-- trunc_normal_(t[, mean = 0, std = 1, a = -2, b = 2]): a normal draw cut to [a, b], by
-- PyTorch's inverse-CDF method (uniform between the bounds' CDF values, erfinv, then clamped)
function init.trunc_normal_(t, ...)
    local mean, std, a, b = args("trunc_normal_", { "mean", "std", "a", "b" },
        { 0.0, 1.0, -2.0, 2.0 }, t, ...)
    real_only("trunc_normal_", t) -- (PyTorch's has no complex erfinv)
    for _, kv in ipairs({ { "mean", mean }, { "std", std }, { "a", a }, { "b", b } }) do
        number("trunc_normal_", kv[1], kv[2])
    end
    if not (a < b) then
        raise(string.format("tide: nn.init.trunc_normal_: expected a < b, got a = %s, b = %s",
            tostring(a), tostring(b)))
    end
    -- the standard normal's CDF at the bounds (erf of a float64 tensor: Lua has none)
    local c = core.tensor({ (a - mean) / std, (b - mean) / std }, { dtype = "float64" })
        :div(math.sqrt(2)):erf():add(1):div(2):totable()
    local l, u = c[1], c[2]
    return filling(t, function(dst)
        if empty(dst) then
            return
        end
        dst:uniform_(2 * l - 1, 2 * u - 1):erfinv_():mul_(std * math.sqrt(2)):add_(mean)
            :clamp_(a, b)
    end)
end

-- eye_(t): the identity matrix of a 2-D t (ones on the diagonal, zeros elsewhere)
function init.eye_(t, ...)
    args("eye_", {}, {}, t, ...)
    if t:dim() ~= 2 then
        raise("tide: nn.init.eye_: only 2-D tensors are supported, got " .. t:dim() .. "-D")
    end
    return filling(t, function(dst)
        local real = is_complex(dst) and dst.real or dst -- (a complex one's real part)
        dst:copy_(core.eye(dst:size(1), dst:size(2), { dtype = real.dtype, device = dst.device }))
    end)
end

-- dirac_(t[, groups = 1]): a convolution weight {out, in, k...} (3 to 5 dims) that passes its
-- input through: 1 at the kernel's centre of channel d to output d, in each group
function init.dirac_(t, ...)
    local groups = args("dirac_", { "groups" }, { 1 }, t, ...)
    local nd = t:dim()
    if nd < 3 or nd > 5 then
        raise("tide: nn.init.dirac_: only 3-, 4- and 5-D tensors are supported, got " .. nd ..
            "-D")
    end
    if not compat.is_integer(groups) or groups < 1 or t:size(1) % groups ~= 0 then
        raise(string.format("tide: nn.init.dirac_: dim 1 (%d) must be divisible by groups, " ..
            "got %s", t:size(1), tostring(groups)))
    end
    local per = compat.idiv(t:size(1), groups)
    local min_dim = math.min(per, t:size(2))
    return filling(t, function(dst)
        dst:zero_()
        if min_dim == 0 then
            return -- (an empty weight: groups may be any divisor of 0)
        end
        for g = 0, groups - 1 do
            for d = 1, min_dim do
                local v = dst:select(1, g * per + d):select(1, d)
                for k = 3, nd do
                    v = v:select(1, compat.idiv(dst:size(k), 2) + 1)
                end
                v:fill_(1)
            end
        end
    end)
end

-- sparse_(t, sparsity[, std = 0.01]): a 2-D t drawn from normal(0, std), then in each column
-- ceil(sparsity * rows) entries at rows drawn at random (a randperm per column) set to zero
-- (Martens 2010, PyTorch's algorithm)
function init.sparse_(t, ...)
    local sparsity, std = args("sparse_", { "sparsity", "std" }, { nil, 0.01 }, t, ...)
    real_only("sparse_", t)
    if t:dim() ~= 2 then
        raise("tide: nn.init.sparse_: only 2-D tensors are supported, got " .. t:dim() .. "-D")
    end
    if type(sparsity) ~= "number" or not (sparsity >= 0 and sparsity <= 1) then
        raise("tide: nn.init.sparse_: expected sparsity, the fraction of each column set to " ..
            "zero, to be a number in [0, 1], got " .. tostring(sparsity))
    end
    number("sparse_", "std", std)
    local rows, cols = t:size(1), t:size(2)
    local zeros = math.ceil(sparsity * rows)
    return filling(t, function(dst)
        dst:normal_(0, std)
        if zeros == 0 then
            return
        end
        for c = 1, cols do
            local idx = core.randperm(rows):narrow(1, 1, zeros):to(dst.device) -- (1-based)
            dst:select(2, c):index_fill_(1, idx, 0)
        end
    end)
end

-- PyTorch's deprecated names without the trailing underscore (nn.init.uniform, ...): the same
-- functions, warning once each as PyTorch's do
local warn = require("tide._warn")
for _, old in ipairs({ "uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse", "dirac", "eye" }) do
    local new = init[old .. "_"]
    init[old] = function(...)
        warn.once("nn.init." .. old, string.format("nn.init.%s is now deprecated in favor of " ..
            "nn.init.%s_", old, old))
        return new(...)
    end
end

return init
