-- tide.finite_differences: PyTorch's torch.gradient: tide.gradient(t[, {spacing = 1, dim =,
-- edge_order = 1}]), the derivative of t's samples estimated along each dim (all, or dim: one
-- or a list, 1-based) by central differences inside and one-sided ones of edge_order (1 or 2)
-- at the ends; one result per dim, as many results. spacing: one number for every dim, a list
-- of numbers (one per dim) or of 1-D tensors (the sample coordinates along each dim, for
-- uneven spacing). Written with narrow, arithmetic and cat, which autograd differentiates.
-- Integer t gives float32. Loaded on first use (lua/tide/_lazy_ops.lua).
local core = require("tide.core")
local args = require("tide.op_args")
local raise = require("tide.autograd.raise")
local same_device = require("tide._same_device")
local compat = require("tide._compat")

local check, shape_str = args.check, args.shape_str

local M = { functions = {} }

local OPTIONS = { "spacing", "dim", "edge_order" }

-- the derivative along d of x with an even step h (a number)
local function even(x, d, h, order)
    local n = x:size(d)
    local function f(s, len)
        return x:narrow(d, s, len)
    end
    local parts = {}
    if order == 1 then
        parts[1] = (f(2, 1) - f(1, 1)) / h
    else
        parts[1] = (f(1, 1) * -3 + f(2, 1) * 4 - f(3, 1)) / (2 * h)
    end
    if n > 2 then
        parts[#parts + 1] = (f(3, n - 2) - f(1, n - 2)) / (2 * h)
    end
    if order == 1 then
        parts[#parts + 1] = (f(n, 1) - f(n - 1, 1)) / h
    else
        parts[#parts + 1] = (f(n - 2, 1) - f(n - 1, 1) * 4 + f(n, 1) * 3) / (2 * h)
    end
    return core.cat(parts, d)
end

-- the derivative along d of x sampled at the coordinates c (1-D, x's size at d): NumPy's and
-- PyTorch's second-order formula for uneven steps inside
local function uneven(x, d, c, order)
    local n = x:size(d)
    local shape = {}
    for i = 1, x:dim() do
        shape[i] = 1
    end
    local dx = c:narrow(1, 2, n - 1) - c:narrow(1, 1, n - 1)
    local function step(s, len) -- steps s..s+len-1, shaped to broadcast along d
        shape[d] = len
        return dx:narrow(1, s, len):reshape(shape)
    end
    local function f(s, len)
        return x:narrow(d, s, len)
    end
    local parts = {}
    if order == 1 then
        parts[1] = (f(2, 1) - f(1, 1)) / step(1, 1)
    else
        local h1, h2 = step(1, 1), step(2, 1)
        local a = -(h1 * 2 + h2) / (h1 * (h1 + h2))
        local b = (h1 + h2) / (h1 * h2)
        local cc = -h1 / (h2 * (h1 + h2))
        parts[1] = f(1, 1) * a + f(2, 1) * b + f(3, 1) * cc
    end
    if n > 2 then
        local hl, hr = step(1, n - 2), step(2, n - 2)
        local a = -hr / (hl * (hl + hr))
        local b = (hr - hl) / (hl * hr)
        local cc = hl / (hr * (hl + hr))
        parts[#parts + 1] = f(1, n - 2) * a + f(2, n - 2) * b + f(3, n - 2) * cc
    end
    if order == 1 then
        parts[#parts + 1] = (f(n, 1) - f(n - 1, 1)) / step(n - 1, 1)
    else
        local h1, h2 = step(n - 2, 1), step(n - 1, 1)
        local a = h2 / (h1 * (h1 + h2))
        local b = -(h2 + h1) / (h1 * h2)
        local cc = (h2 * 2 + h1) / (h2 * (h1 + h2))
        parts[#parts + 1] = f(n - 2, 1) * a + f(n - 1, 1) * b + f(n, 1) * cc
    end
    return core.cat(parts, d)
end

function M.functions.gradient(x, opts, ...)
    local op = "gradient"
    args.no_extra(op, 2, ...)
    check(op, x)
    local o = args.options(op, opts, OPTIONS, "{dim = 1}")
    local order = o.edge_order == nil and 1 or o.edge_order
    if order ~= 1 and order ~= 2 then
        raise(("tide: %s: edge_order = %s; expected 1 or 2"):format(op, tostring(order)))
    end
    if x:dim() == 0 then
        raise(("tide: %s: needs a tensor of at least 1 dim, got a 0-D tensor"):format(op))
    end
    local dims = {}
    if o.dim == nil then
        for i = 1, x:dim() do
            dims[i] = i
        end
    elseif type(o.dim) == "table" then
        args.check_list(op, o.dim, "dim")
        for i, d in ipairs(o.dim) do
            dims[i] = args.dim_of(op, x, d)
        end
    else
        dims[1] = args.dim_of(op, x, o.dim)
    end
    local seen = {}
    for _, d in ipairs(dims) do
        if seen[d] then
            raise(("tide: %s: dim %d appears twice in dim"):format(op, d))
        end
        seen[d] = true
    end
    -- one spacing per dim: a number, or a 1-D coordinate tensor
    local sp, spacing = {}, o.spacing
    if spacing == nil or type(spacing) == "number" or core.is_tensor(spacing) then
        for i = 1, #dims do
            sp[i] = spacing == nil and 1 or spacing
        end
    elseif type(spacing) == "table" then
        args.check_list(op, spacing, "spacing")
        if #spacing ~= #dims then
            raise(("tide: %s: spacing has %d entries for %d dims; give one per dim (or one " ..
                "number)"):format(op, #spacing, #dims))
        end
        for i = 1, #spacing do
            sp[i] = spacing[i]
        end
    else
        raise(("tide: %s: spacing must be a number, a list of numbers or of 1-D tensors, " ..
            "got %s"):format(op, type(spacing)))
    end
    for i, s in ipairs(sp) do
        local d = dims[i]
        if core.is_tensor(s) then
            if s:dim() == 0 then
                sp[i] = s:item()
            elseif s:dim() ~= 1 or s:numel() ~= x:size(d) then
                raise(("tide: %s: spacing %d: coordinates %s must be 1-D of dim %d's size %d")
                    :format(op, i, shape_str(s:size()), d, x:size(d)))
            else
                same_device(op, x, s)
            end
        elseif type(s) ~= "number" then
            raise(("tide: %s: spacing %d must be a number or a 1-D tensor, got %s"):format(op,
                i, type(s)))
        end
        if x:size(d) < order + 1 then
            raise(("tide: %s: dim %d has size %d; edge_order %d needs at least %d")
                :format(op, d, x:size(d), order, order + 1))
        end
    end
    if not args.FLOAT[x.dtype] then
        x = x:to(core.get_default_dtype())
    end
    local out = {}
    for i, d in ipairs(dims) do
        local s = sp[i]
        out[i] = core.is_tensor(s) and uneven(x, d, s, order) or even(x, d, s, order)
    end
    return compat.unpack(out, 1, #out)
end

M.names = { "gradient" }
return M
