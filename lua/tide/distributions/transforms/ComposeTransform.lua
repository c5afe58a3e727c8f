-- tide.distributions.transforms.ComposeTransform(parts[, {cache_size =}]): the transforms of
-- the list parts applied in order (PyTorch's): its log |det J| sums the parts' (each summed
-- over the event dims it lacks), its inverse composes the parts' inverses in reverse, its
-- domain and codomain are the first's and the last's widened to the largest event dim along
-- the chain. The parts cache (cache_size given here reaches them); ComposeTransform({}) is the
-- identity (identity_transform).
local core = require("tide.core")
local args = require("tide.op_args")
local Transform = require("tide.distributions.transforms.Transform")
local U = require("tide.distributions.transforms._util")

local Compose = Transform:extend("ComposeTransform")

function Compose:init(parts, opts, ...)
    args.no_extra("ComposeTransform", 3, ...)
    parts = Transform.transform_list("ComposeTransform", parts, "parts")
    local o = self:_options(opts)
    local list = {}
    for i, p in ipairs(parts) do
        list[i] = (o.cache_size or 0) ~= 0 and p:with_cache(o.cache_size) or p
    end
    self.parts = list
end

local function constraints()
    return require("tide.distributions.constraints")
end

local G = Compose._getters
function G.domain(self)
    local parts = self.parts
    if #parts == 0 then
        return constraints().real
    end
    local domain = parts[1].domain
    local ed = parts[#parts].codomain.event_dim
    for i = #parts, 1, -1 do
        local p = parts[i]
        ed = math.max(ed + p.domain.event_dim - p.codomain.event_dim, p.domain.event_dim)
    end
    if ed > domain.event_dim then
        domain = constraints().independent(domain, ed - domain.event_dim)
    end
    return domain
end

function G.codomain(self)
    local parts = self.parts
    if #parts == 0 then
        return constraints().real
    end
    local codomain = parts[#parts].codomain
    local ed = parts[1].domain.event_dim
    for _, p in ipairs(parts) do
        ed = math.max(ed + p.codomain.event_dim - p.domain.event_dim, p.codomain.event_dim)
    end
    if ed > codomain.event_dim then
        codomain = constraints().independent(codomain, ed - codomain.event_dim)
    end
    return codomain
end

function G.bijective(self)
    for _, p in ipairs(self.parts) do
        if not p.bijective then
            return false
        end
    end
    return true
end

function G.sign(self)
    local sign = 1
    for _, p in ipairs(self.parts) do
        sign = sign * p.sign
    end
    return sign
end

-- the parts' inverses in reverse, made once; its inverse is self again
function G.inv(self)
    local inv = rawget(self, "_inv_obj")
    if not inv then
        local list = {}
        for i = #self.parts, 1, -1 do
            list[#list + 1] = self.parts[i].inv
        end
        inv = Compose(list)
        rawset(self, "_inv_obj", inv)
        rawset(inv, "_inv_obj", self)
    end
    return inv
end

function Compose:with_cache(n)
    n = n == nil and 1 or n
    if self._cache_size == n then
        return self
    end
    return Compose(self.parts, { cache_size = n })
end

function Compose:_eq(other)
    if getmetatable(other) ~= Compose or #self.parts ~= #other.parts then
        return false
    end
    for i, p in ipairs(self.parts) do
        if not (p == other.parts[i]) then
            return false
        end
    end
    return true
end

function Compose:forward(x)
    self:_tensor(x)
    for _, p in ipairs(self.parts) do
        x = p(x)
    end
    return x
end

function Compose:log_abs_det_jacobian(x, y)
    local parts = self.parts
    if #parts == 0 then
        return core.zeros(x:size(), { dtype = x.dtype, device = x.device })
    end
    -- the intermediates (free where the parts cache)
    local xs = { x }
    for i = 1, #parts - 1 do
        xs[i + 1] = parts[i](xs[i])
    end
    xs[#parts + 1] = y
    local total
    local ed = self.domain.event_dim
    for i, p in ipairs(parts) do
        local term = U.sum_rightmost(p:log_abs_det_jacobian(xs[i], xs[i + 1]),
            ed - p.domain.event_dim)
        total = total and total + term or term
        ed = ed + p.codomain.event_dim - p.domain.event_dim
    end
    return total
end

function Compose:forward_shape(shape)
    for _, p in ipairs(self.parts) do
        shape = p:forward_shape(shape)
    end
    return shape
end

function Compose:inverse_shape(shape)
    for i = #self.parts, 1, -1 do
        shape = self.parts[i]:inverse_shape(shape)
    end
    return shape
end

function Compose:_repr()
    local lines = {}
    for i, p in ipairs(self.parts) do
        lines[i] = tostring(p)
    end
    return "ComposeTransform(\n    " .. table.concat(lines, ",\n    ") .. "\n)"
end

return Compose
