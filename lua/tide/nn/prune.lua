-- tide.nn.utils.prune: PyTorch 1.13's torch.nn.utils.prune. Pruning a parameter `name` of a
-- module moves it to the parameter name .. "_orig" (the same tensor), adds the buffer
-- name .. "_mask" (0 for the pruned entries, 1 for the others, the parameter's dtype), and makes
-- module[name] = orig * mask, computed now and again before each forward by a forward pre-hook
-- (state_dict keys as PyTorch's: weight_orig, weight_mask). The hook is the pruning method
-- itself, as PyTorch's: an instance of a subclass of prune.BasePruningMethod (L1Unstructured,
-- ...) whose _tensor_name is `name`, found in module._forward_pre_hooks. Pruning the same
-- parameter again puts both methods in a prune.PruningContainer (the hook then) and combines the
-- masks as PyTorch's: the new amount applies to the entries (for structured pruning, the
-- channels) still unpruned. remove() makes the pruned value a plain parameter again. Every check
-- happens before the module changes: a refused call leaves it as it was.
--
-- The functions take PyTorch's parameters by position or, after the module, in a table by name
-- (Python's keywords): prune.ln_structured(m, {name = "weight", amount = 0.5, n = 2, dim = 1}).
-- A method of one's own: Sub = prune.BasePruningMethod:extend("Sub"), Sub.PRUNING_TYPE =
-- "unstructured" | "structured" (with self.dim) | "global", function Sub:compute_mask(t,
-- default_mask) ... end, and Sub.apply(module, name, ...) (or Sub:apply) prunes with Sub(...).
--
-- amount: an integer is a count, a non-integral number in [0, 1] a fraction of the entries
-- (channels) left, rounded half to even as Python's round(). On Lua 5.1 and LuaJIT an integral
-- number is an integer, so amount = 1 is one entry there (5.4: 1.0 is the fraction, all).
-- dims are 1-based (PyTorch's dim = 0 is dim = 1); negative dims count from the end.
local core = require("tide.core")
local autograd = require("tide.autograd")
local compat = require("tide._compat")
local class = require("tide._class")
local P = require("tide.pytorch_args")
local hooks = require("tide.nn.module_hooks")
local raise = autograd.raise
local is_tensor = autograd.is_tensor

local M = {}

local function type_of(v)
    return is_tensor(v) and "a tensor" or type(v)
end

-- {3, 4}, as tide's messages write a shape
local function shape_str(t)
    return "{" .. table.concat(t.shape, ", ") .. "}"
end

local function same_shape(a, b)
    if a:dim() ~= b:dim() then
        return false
    end
    for i = 1, a:dim() do
        if a:size(i) ~= b:size(i) then
            return false
        end
    end
    return true
end

local function is_module(v)
    return type(v) == "table" and v.__ismodule and type(rawget(v, "_kind")) == "table"
end

-- ---- the classes ----

local BasePruningMethod = { __name = "BasePruningMethod" }

-- v is an instance of BasePruningMethod or of a class extended from it
local function is_method(v)
    return type(v) == "table" and not rawequal(v, BasePruningMethod) and
        class.is_instance(v, BasePruningMethod)
end

-- v is BasePruningMethod or a class extended from it
local function is_method_class(v)
    if type(v) ~= "table" then
        return false
    end
    local c = v
    while type(c) == "table" do
        if rawequal(c, BasePruningMethod) then
            return true
        end
        local mt = getmetatable(c)
        c = mt and rawget(mt, "__index")
    end
    return false
end

-- the pruning hook of module[name] (a method or a container), or nil; PyTorch's search of
-- module._forward_pre_hooks
local function hook_of(module, name)
    for _, h in ipairs(rawget(module, "_forward_pre_hooks") or {}) do
        if is_method(h) and h._tensor_name == name then
            return h
        end
    end
end

-- orig * mask, mask in orig's dtype (a model moved to another dtype keeps the mask's own)
local function masked(module, name)
    local orig, mask = rawget(module, name .. "_orig"), rawget(module, name .. "_mask")
    if mask.dtype ~= orig.dtype then
        mask = mask:to(orig.dtype)
    end
    return mask * orig
end

-- checks module and name, and that module[name] is a parameter or already pruned; returns the
-- tensor pruning starts from (the parameter, or orig) and the pruning hook (nil: not pruned yet)
local function target(who, module, name)
    if not is_module(module) then
        raise("tide: " .. who .. ": expected a Module, got " .. type_of(module))
    end
    if type(name) ~= "string" then
        raise("tide: " .. who .. ": name must be a string such as \"weight\", got " ..
            type_of(name))
    end
    local hook = hook_of(module, name)
    if hook then
        return rawget(module, name .. "_orig"), hook
    end
    local p = rawget(module, name)
    if module._kind[name] ~= "parameter" or not is_tensor(p) then
        raise(string.format("tide: %s: %s has no parameter '%s'%s", who, module.__name, name,
            module._kind[name] and " (it is a " .. module._kind[name] .. ")" or ""))
    end
    for _, suffix in ipairs({ "_orig", "_mask" }) do
        if module._kind[name .. suffix] or rawget(module, name .. suffix) ~= nil then
            raise(string.format("tide: %s: %s already has a field '%s', where pruning '%s' " ..
                "would put its %s; rename it first", who, module.__name, name .. suffix, name,
                suffix == "_orig" and "parameter" or "mask"))
        end
    end
    return p, nil
end

-- amount as PyTorch's _validate_pruning_amount_init checks it
local function check_amount(who, amount)
    if type(amount) ~= "number" then
        raise(string.format("tide: %s: amount must be an integer count or a fraction in " ..
            "[0, 1], got %s", who, type_of(amount)))
    end
    local bad
    if compat.is_integer(amount) then
        bad = amount < 0
    else
        bad = not (amount >= 0 and amount <= 1) -- NaN too
    end
    if bad then
        raise(string.format("tide: %s: amount = %s must be an integer count or a fraction " ..
            "in [0, 1]", who, tostring(amount)))
    end
end

-- Python's round(): halves to even
local function round_half_even(x)
    local f = math.floor(x)
    local d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 == 1) then
        f = f + 1
    end
    return compat.tointeger(f) or f
end

-- how many of n entries (channels) amount prunes; a count above n raises
local function count_to_prune(who, amount, n, what, name)
    if compat.is_integer(amount) then
        if amount > n then
            raise(string.format("tide: %s: amount = %s is more than the %d %s of '%s' left " ..
                "to prune; give at most %d, or a fraction", who, tostring(amount), n, what,
                name, n))
        end
        return amount
    end
    return round_half_even(amount * n)
end

-- a 1-based dim of an nd-D tensor (negative: from the end) -> positive, or raises
local function resolve_dim(who, dim, t, name)
    local nd = t:dim()
    if not compat.is_integer(dim) or dim == 0 or dim > nd or dim < -nd then
        raise(string.format("tide: %s: dim = %s is not a dim of '%s' (shape %s); give 1..%d " ..
            "(1-based) or -%d..-1", who, tostring(dim), name, shape_str(t), nd, nd))
    end
    return dim < 0 and nd + 1 + dim or dim
end

-- the product of t's sizes but dim d's
local function per_channel(t, d)
    local per = 1
    for i = 1, t:dim() do
        if i ~= d then
            per = per * t:size(i)
        end
    end
    return per
end

-- a copy of dm with the channels idx along dim d zeroed
local function drop_channels(dm, d, idx)
    local mask = dm:clone()
    mask:index_fill_(d, idx, 0)
    return mask
end

-- the name errors give the method (the function that made it, or its class) and the tensor
local function who_of(self)
    return rawget(self, "_who") or self.__name
end

local function label_of(self)
    return rawget(self, "_label") or rawget(self, "_tensor_name") or "the tensor"
end

-- metamethods are not inherited through __index: every class gets its own
local function install(cls)
    cls.__index = cls
    -- the forward pre-hook: module[name] = orig * mask before each call
    cls.__call = function(self, module)
        rawset(module, self._tensor_name, self:apply_mask(module))
    end
    cls.__tostring = function(self)
        return "<tide.nn.utils.prune." .. cls.__name .. " object>"
    end
end

local apply_class -- below

-- the class's apply(module, name, ...), PyTorch's classmethod: Sub.apply(m, "weight", 0.3) or
-- Sub:apply(m, "weight", 0.3)
local function bind_apply(cls)
    cls.apply = function(first, ...)
        if rawequal(first, cls) then
            return apply_class(cls, ...)
        end
        return apply_class(cls, first, ...)
    end
end

install(BasePruningMethod)
bind_apply(BasePruningMethod)
class.class(BasePruningMethod)

--- Sub = BasePruningMethod:extend(name): a pruning method class; Sub(...) calls Sub:init(...)
function BasePruningMethod:extend(name)
    if name ~= nil and type(name) ~= "string" then
        raise("tide: BasePruningMethod:extend: expected a class name (a string), got " ..
            type_of(name))
    end
    local cls = { __name = name or "BasePruningMethod", super = self }
    install(cls)
    bind_apply(cls)
    return class.class(cls, self)
end

function BasePruningMethod.new(cls, ...)
    local o = setmetatable({}, cls)
    o:init(...)
    return o
end

function BasePruningMethod:init(...)
    require("tide.op_args").no_extra(self.__name, 0, ...)
end

function BasePruningMethod:compute_mask()
    raise("tide: " .. self.__name .. ": compute_mask is not defined; define " .. self.__name ..
        ":compute_mask(t, default_mask), returning the mask")
end

--- method:apply_mask(module): module[name .. "_orig"] * module[name .. "_mask"]
function BasePruningMethod:apply_mask(module)
    local name = rawget(self, "_tensor_name")
    if name == nil then
        raise("tide: " .. self.__name .. ":apply_mask: the method prunes no tensor yet " ..
            "(_tensor_name is nil); apply it to a module first")
    end
    return masked(module, name)
end

-- the checks of a mask compute_mask returned
local function check_mask(self, mask, ref)
    if not is_tensor(mask) then
        raise(string.format("tide: %s: compute_mask must return a mask tensor, got %s",
            who_of(self), type_of(mask)))
    end
    if not same_shape(mask, ref) then
        raise(string.format("tide: %s: compute_mask returned a mask of shape %s for a tensor " ..
            "of shape %s; return one of its shape", who_of(self), shape_str(mask),
            shape_str(ref)))
    end
    return mask
end

-- the mask after `method` of a tensor whose scores are t and whose current mask is `mask`: the
-- method sees only the entries (channels) still unpruned, as PyTorch's
-- PruningContainer._combine_masks, by the method's PRUNING_TYPE
local function combine(method, t, mask)
    mask = mask:detach():clone():contiguous() -- flattened by view below
    local kind = method.PRUNING_TYPE
    if kind == "global" then
        return check_mask(method, method:compute_mask(t, mask), mask)
    end
    local d, flat_t, flat_m, idx
    if kind == "unstructured" then
        d, flat_t, flat_m = 1, t:reshape(-1), mask:view(-1)
        idx = flat_m:eq(1):nonzero():reshape(-1)
    elseif kind == "structured" then
        if method.dim == nil then
            raise(string.format("tide: %s: a structured method needs the dim it prunes " ..
                "along (self.dim)", who_of(method)))
        end
        d = resolve_dim(who_of(method), method.dim, mask, label_of(method))
        flat_t, flat_m = t, mask
        local nch = mask:size(d)
        idx = mask:movedim(d, 1):reshape(nch, per_channel(mask, d)):sum(2):ne(0):nonzero()
            :reshape(-1)
    else
        raise(string.format("tide: %s: PRUNING_TYPE = %s; give \"unstructured\", " ..
            "\"structured\" or \"global\"", who_of(method), tostring(kind)))
    end
    local part_m = flat_m:index_select(d, idx)
    local partial = check_mask(method, method:compute_mask(flat_t:index_select(d, idx), part_m),
        part_m)
    flat_m:index_copy_(d, idx, partial:to(mask.dtype))
    return mask
end

--- method:prune(t[, default_mask[, importance_scores]]) (or those by name): t * the mask
function BasePruningMethod:prune(t, ...)
    local o = P.merge(self.__name .. ":prune", { "default_mask", "importance_scores" }, ...) or
        {}
    core._check_options(o, self.__name .. ":prune", { "default_mask", "importance_scores" })
    if not is_tensor(t) then
        raise("tide: " .. self.__name .. ":prune: expected a tensor, got " .. type_of(t))
    end
    local scores = o.importance_scores or t
    local dm = o.default_mask or core.ones(t.shape, { dtype = t.dtype, device = t.device })
    local mask = autograd.no_grad(function()
        return check_mask(self, self:compute_mask(scores:detach(), dm:detach()), t)
    end)
    return t * mask:to(t.dtype)
end

local function remove_pruning(module, name, hook)
    local orig = rawget(module, name .. "_orig")
    autograd.no_grad(function()
        orig:copy_(masked(module, name))
    end)
    hooks.remove_hook(module, "_forward_pre_hooks", hook)
    module:_unregister(name .. "_orig")
    module:_unregister(name .. "_mask")
    rawset(module, name, nil)
    module:register_parameter(name, orig)
    return module
end

--- method:remove(module): the pruning made permanent (prune.remove's work)
function BasePruningMethod:remove(module)
    local name = rawget(self, "_tensor_name")
    if name == nil or not is_module(module) or hook_of(module, name) ~= self then
        raise("tide: " .. self.__name .. ":remove: the method does not prune a tensor of " ..
            "this module; give the module it was applied to")
    end
    return remove_pruning(module, name, self)
end

-- ---- PruningContainer: the methods applied in turn to one tensor ----

local PruningContainer = BasePruningMethod:extend("PruningContainer")

--- PruningContainer(m1, m2, ...) or PruningContainer({m1, m2, ...}): the methods (all of one
--- tensor) as one; container[i] and ipairs(container) are the methods (PyTorch's list(hook)),
--- container._pruning_methods the same list
function PruningContainer:init(...)
    self._pruning_methods = self
    local args = compat.pack(...)
    if args.n == 1 and type(args[1]) == "table" and not is_method(args[1]) then
        args = compat.pack(compat.unpack(args[1]))
    end
    for i = 1, args.n do
        self:add_pruning_method(args[i])
    end
end

--- container:add_pruning_method(method): method (of the same tensor) added last
function PruningContainer:add_pruning_method(method)
    if not is_method(method) then
        raise("tide: PruningContainer:add_pruning_method: expected a pruning method " ..
            "(an instance of a BasePruningMethod class), got " .. type_of(method))
    end
    local name = rawget(self, "_tensor_name")
    if name == nil then
        self._tensor_name = method._tensor_name
    elseif method._tensor_name ~= name then
        raise(string.format("tide: PruningContainer:add_pruning_method: the method prunes " ..
            "'%s', the container '%s'; a container holds the methods of one tensor",
            tostring(method._tensor_name), name))
    end
    self[#self + 1] = method
end

--- container:compute_mask(t, default_mask): the last method applied to what the others left
function PruningContainer:compute_mask(t, default_mask)
    if #self == 0 then
        raise("tide: PruningContainer:compute_mask: the container holds no method; add one " ..
            "with add_pruning_method")
    end
    return combine(self[#self], t, default_mask)
end

-- ---- the methods of torch.nn.utils.prune ----

local Identity = BasePruningMethod:extend("Identity")
Identity.PRUNING_TYPE = "unstructured"
function Identity:compute_mask(_, default_mask)
    return default_mask
end

-- the constructor arguments by position or name (PyTorch's keywords)
local function args(self, names, ...)
    local o = P.merge(self.__name, names, ...) or {}
    core._check_options(o, self.__name, names)
    return o
end

local RandomUnstructured = BasePruningMethod:extend("RandomUnstructured")
RandomUnstructured.PRUNING_TYPE = "unstructured"
-- init(...) of the unstructured methods: amount, by position or name, checked
local function amount_only(self, ...)
    self.amount = args(self, { "amount" }, ...).amount
    check_amount(who_of(self), self.amount)
end

--- RandomUnstructured(amount)
RandomUnstructured.init = amount_only

function RandomUnstructured:compute_mask(t, dm)
    local n = t:numel()
    local k = count_to_prune(who_of(self), self.amount, n, "entries", label_of(self))
    local mask = dm:clone()
    if k > 0 then
        local _, idx = core.rand({ n }, { device = dm.device }):topk(k)
        mask:view(-1):index_fill_(1, idx, 0)
    end
    return mask
end

local L1Unstructured = BasePruningMethod:extend("L1Unstructured")
L1Unstructured.PRUNING_TYPE = "unstructured"
--- L1Unstructured(amount)
L1Unstructured.init = amount_only

function L1Unstructured:compute_mask(t, dm)
    local k = count_to_prune(who_of(self), self.amount, t:numel(), "entries", label_of(self))
    local mask = dm:clone()
    if k > 0 then
        local _, idx = t:abs():reshape(-1):topk(k, -1, false)
        mask:view(-1):index_fill_(1, idx, 0)
    end
    return mask
end

local RandomStructured = BasePruningMethod:extend("RandomStructured")
RandomStructured.PRUNING_TYPE = "structured"
--- RandomStructured(amount[, dim = -1])
function RandomStructured:init(...)
    local o = args(self, { "amount", "dim" }, ...)
    check_amount(who_of(self), o.amount)
    self.amount, self.dim = o.amount, o.dim or -1
end

function RandomStructured:compute_mask(t, dm)
    local d = resolve_dim(who_of(self), self.dim, t, label_of(self))
    local nch = t:size(d)
    local k = count_to_prune(who_of(self), self.amount, nch, "channels", label_of(self))
    if k == 0 then
        return dm
    end
    local _, idx = core.rand({ nch }, { device = dm.device }):topk(k, -1, false)
    return drop_channels(dm, d, idx)
end

-- n a number (math.huge: the max norm) or "fro" (2)
local function check_n(who, n)
    if n == "fro" then
        return 2
    elseif type(n) ~= "number" or n ~= n then
        raise(string.format("tide: %s: n must be a number (math.huge for the max norm) or " ..
            "\"fro\", got %s", who, type(n) == "string" and ("\"" .. n .. "\"") or
            type(n) == "number" and tostring(n) or type_of(n)))
    end
    return n
end

local LnStructured = BasePruningMethod:extend("LnStructured")
LnStructured.PRUNING_TYPE = "structured"
--- LnStructured(amount, n[, dim = -1])
function LnStructured:init(...)
    local o = args(self, { "amount", "n", "dim" }, ...)
    check_amount(who_of(self), o.amount)
    self.amount, self.n, self.dim = o.amount, check_n(who_of(self), o.n), o.dim or -1
end

function LnStructured:compute_mask(t, dm)
    local d = resolve_dim(who_of(self), self.dim, t, label_of(self))
    local nch = t:size(d)
    local k = count_to_prune(who_of(self), self.amount, nch, "channels", label_of(self))
    if k == 0 then
        return dm
    end
    local norms = t:movedim(d, 1):reshape(nch, per_channel(t, d)):norm(self.n, 2)
    local _, idx = norms:topk(k, -1, false) -- PyTorch keeps the nch - k largest
    return drop_channels(dm, d, idx)
end

local CustomFromMask = BasePruningMethod:extend("CustomFromMask")
CustomFromMask.PRUNING_TYPE = "global"
--- CustomFromMask(mask)
function CustomFromMask:init(...)
    local mask = args(self, { "mask" }, ...).mask
    if not is_tensor(mask) then
        raise("tide: " .. who_of(self) .. ": mask must be a tensor of 0s and 1s, got " ..
            type_of(mask))
    end
    self.mask = mask
end

function CustomFromMask:compute_mask(_, dm)
    return dm * self.mask:to(dm.dtype)
end

M.BasePruningMethod, M.PruningContainer, M.Identity = BasePruningMethod, PruningContainer,
    Identity
M.RandomUnstructured, M.L1Unstructured = RandomUnstructured, L1Unstructured
M.RandomStructured, M.LnStructured, M.CustomFromMask = RandomStructured, LnStructured,
    CustomFromMask

-- ---- applying a method to a module ----

-- importance scores of a parameter: a tensor of its shape on its device, or nil (the weight)
local function check_scores(who, scores, ref, name, what)
    if scores == nil then
        return
    end
    if not is_tensor(scores) then
        raise(string.format("tide: %s: %s must be a tensor, got %s", who, what,
            type_of(scores)))
    end
    if not same_shape(scores, ref) then
        raise(string.format("tide: %s: %s has shape %s, '%s' has %s; give scores of its shape",
            who, what, shape_str(scores), name, shape_str(ref)))
    end
    if scores.device ~= ref.device then
        raise(string.format("tide: %s: %s is on %s, '%s' on %s; move it there", who, what,
            tostring(scores.device), name, tostring(ref.device)))
    end
end

-- the tensor pruning measures: the scores given, or the current pruned value
local function current(module, name, hook, p)
    if hook then
        return masked(module, name)
    end
    return p
end

-- structured pruning needs 2 or more dims, and dim one of them
local function structured_dim(who, p, name, dim)
    if p:dim() <= 1 then
        raise(string.format("tide: %s: structured pruning needs a tensor of 2 or more dims; " ..
            "'%s' has shape %s", who, name, shape_str(p)))
    end
    return resolve_dim(who, dim, p, name)
end

-- prunes module[name] (checked by target(): p the tensor, hook its pruning hook or nil) with
-- method, a new instance; nothing changes on the module until the mask is known. Returns the
-- hook now in place (method, or the container holding it), as PyTorch's apply
local function apply(who, module, name, method, scores, p, hook)
    rawset(method, "_tensor_name", name)
    if rawget(method, "_who") == nil then
        rawset(method, "_who", who)
    end
    if method.PRUNING_TYPE == "structured" then
        if method.dim == nil then
            raise(string.format("tide: %s: a structured method needs the dim it prunes " ..
                "along (self.dim)", who_of(method)))
        end
        structured_dim(who, p, name, method.dim)
    end
    check_scores(who, scores, p, name, "importance_scores")
    local mask = autograd.no_grad(function()
        local t = (scores or current(module, name, hook, p)):detach()
        local dm = hook and rawget(module, name .. "_mask") or
            core.ones(p.shape, { dtype = p.dtype, device = p.device })
        return combine(method, t, dm)
    end)
    local new_hook = method
    if hook then
        hooks.remove_hook(module, "_forward_pre_hooks", hook) -- it moves to the end, as PyTorch's
        if class.is_instance(hook, PruningContainer) then
            hook:add_pruning_method(method)
            new_hook = hook
        else
            new_hook = PruningContainer(hook, method)
        end
    else
        module:_unregister(name)
        module:register_parameter(name .. "_orig", p)
    end
    module:register_buffer(name .. "_mask", mask)
    module:register_forward_pre_hook(new_hook)
    rawset(module, name, masked(module, name))
    return new_hook
end

-- Sub.apply(module, name, ...[, {importance_scores =, ...}]): prunes module[name] with
-- Sub(...); the options table's importance_scores goes to the pruning, the rest (PyTorch's
-- keywords) to Sub's constructor; name may come in it too. Returns the method in place.
function apply_class(cls, module, name, ...)
    local who = cls.__name .. ".apply"
    local ctor = compat.pack(...)
    local scores
    local function take_options(o)
        local rest = {}
        for k, v in pairs(o) do
            if k == "importance_scores" then
                scores = v
            elseif k == "name" and name == nil then
                name = v
            else
                rest[k] = v
            end
        end
        return next(rest) ~= nil and rest or nil
    end
    if P.is_options(name) then
        local o
        o, name = name, nil
        ctor = compat.pack(take_options(o))
        if ctor[1] == nil then
            ctor.n = 0
        end
    elseif ctor.n > 0 and P.is_options(ctor[ctor.n]) then
        local rest = take_options(ctor[ctor.n])
        ctor[ctor.n] = rest
        if rest == nil then
            ctor.n = ctor.n - 1
        end
    end
    local p, hook = target(who, module, name)
    local method = cls(compat.unpack(ctor, 1, ctor.n))
    return apply(who, module, name, method, scores, p, hook)
end

-- the arguments after the module by position or name: a table name -> value of PyTorch's
-- parameters `names` (an option past them raises, naming those not given by position)
local function call_args(who, names, ...)
    local n = select("#", ...)
    local last = n > 0 and select(n, ...) or nil
    local npos = P.is_options(last) and n - 1 or n
    local o = P.merge(who, names, ...) or {}
    local rest = {}
    for i = npos + 1, #names do
        rest[#rest + 1] = names[i]
    end
    if #rest < #names then
        local extra = {}
        for k, v in pairs(o) do
            if not P.position(names, k) or P.position(names, k) > npos then
                extra[k] = v
            end
        end
        core._check_options(extra, who, rest)
    else
        core._check_options(o, who, names)
    end
    return o
end

-- make(o) -> the method from the call's arguments o
local function run(who, module, o, make)
    local p, hook = target(who, module, o.name)
    local method = make(o)
    rawset(method, "_who", who)
    apply(who, module, o.name, method, o.importance_scores, p, hook)
    return module
end

-- identity(module, name): a mask of ones (the parameter pruned, nothing removed)
function M.identity(module, ...)
    local o = call_args("identity", { "name" }, ...)
    return run("identity", module, o, function()
        return Identity()
    end)
end

-- the method made with _who set first, so that its constructor's errors name the function
local function made(cls, who, ...)
    local o = setmetatable({ _who = who }, cls)
    o:init(...)
    return o
end

-- random_unstructured(module, name, amount): amount entries, drawn at random, pruned
function M.random_unstructured(module, ...)
    local who = "random_unstructured"
    local o = call_args(who, { "name", "amount" }, ...)
    check_amount(who, o.amount)
    return run(who, module, o, function()
        return made(RandomUnstructured, who, o.amount)
    end)
end

-- l1_unstructured(module, name, amount[, importance_scores]): the amount entries of least
-- |importance| (the parameter's own values by default) pruned
function M.l1_unstructured(module, ...)
    local who = "l1_unstructured"
    local o = call_args(who, { "name", "amount", "importance_scores" }, ...)
    check_amount(who, o.amount)
    return run(who, module, o, function()
        return made(L1Unstructured, who, o.amount)
    end)
end

-- random_structured(module, name, amount, dim): amount channels along dim, drawn at random,
-- pruned
function M.random_structured(module, ...)
    local who = "random_structured"
    local o = call_args(who, { "name", "amount", "dim" }, ...)
    check_amount(who, o.amount)
    return run(who, module, o, function()
        return made(RandomStructured, who, o.amount, o.dim)
    end)
end

-- ln_structured(module, name, amount, n, dim[, importance_scores]): the amount channels along
-- dim of least L_n norm (over every other dim) pruned; n a number (math.huge: the max norm) or
-- "fro" (2)
function M.ln_structured(module, ...)
    local who = "ln_structured"
    local o = call_args(who, { "name", "amount", "n", "dim", "importance_scores" }, ...)
    check_amount(who, o.amount)
    check_n(who, o.n)
    return run(who, module, o, function()
        return made(LnStructured, who, o.amount, o.n, o.dim)
    end)
end

-- custom_from_mask(module, name, mask): the entries where mask is 0 pruned (mask a tensor of
-- the parameter's shape and device, any dtype; combined with a mask already there)
function M.custom_from_mask(module, ...)
    local who = "custom_from_mask"
    local o = call_args(who, { "name", "mask" }, ...)
    local p = target(who, module, o.name)
    if not is_tensor(o.mask) then
        raise("tide: custom_from_mask: mask must be a tensor of 0s and 1s, got " ..
            type_of(o.mask))
    end
    check_scores(who, o.mask, p, o.name, "mask")
    return run(who, module, o, function()
        return made(CustomFromMask, who, o.mask)
    end)
end

-- the pruning methods global_unstructured takes by function or name, and their classes
local GLOBAL = { l1_unstructured = L1Unstructured, random_unstructured = RandomUnstructured,
    identity = Identity }
local NOT_GLOBAL = { random_structured = true, ln_structured = true, custom_from_mask = true }

local function global_method(pruning_method)
    if is_method_class(pruning_method) then
        if pruning_method.PRUNING_TYPE ~= "unstructured" then
            raise(string.format("tide: global_unstructured: pruning_method %s has " ..
                "PRUNING_TYPE %s; global pruning takes an unstructured method (" ..
                "prune.L1Unstructured, prune.RandomUnstructured, ...)", pruning_method.__name,
                tostring(pruning_method.PRUNING_TYPE)))
        end
        return pruning_method
    end
    for key, cls in pairs(GLOBAL) do
        if pruning_method == key or pruning_method == M[key] then
            return cls
        end
    end
    for key in pairs(NOT_GLOBAL) do
        if pruning_method == key or pruning_method == M[key] then
            raise("tide: global_unstructured: pruning_method " .. key .. " is not " ..
                "unstructured; give l1_unstructured, random_unstructured or identity")
        end
    end
    raise("tide: global_unstructured: pruning_method must be prune.l1_unstructured, " ..
        "prune.random_unstructured or prune.identity (or its name), got " ..
        (type(pruning_method) == "string" and ("\"" .. pruning_method .. "\"") or
        type_of(pruning_method)) .. "; or a class such as prune.L1Unstructured")
end

-- global_unstructured(parameters, pruning_method[, importance_scores], {amount =, ...}):
-- prunes the parameters as one tensor; parameters a list of {module, name} pairs,
-- pruning_method a class (prune.L1Unstructured, prune.RandomUnstructured, prune.Identity, one's
-- own unstructured one) or the function prune.l1_unstructured, prune.random_unstructured,
-- prune.identity (or its name), given by position or in the options table (PyTorch's
-- keywords); importance_scores a table whose [i] (a tensor, or nil: the parameter's current
-- value) scores parameters[i]; the options other than pruning_method and importance_scores
-- are the method's (amount). The parameters share one device.
function M.global_unstructured(parameters, ...)
    local who = "global_unstructured"
    if type(parameters) ~= "table" or is_tensor(parameters) or #parameters == 0 then
        raise("tide: global_unstructured: parameters must be a non-empty list of " ..
            "{module, name} pairs, got " .. (type(parameters) == "table" and
            not is_tensor(parameters) and "an empty table" or type_of(parameters)))
    end
    local a = compat.pack(...)
    local opts = {}
    if a.n > 0 and P.is_options(a[a.n]) then
        opts = a[a.n]
        a[a.n], a.n = nil, a.n - 1
    elseif a.n > 0 and a[a.n] ~= nil and (type(a[a.n]) ~= "table" or is_tensor(a[a.n])) and
        a.n >= 3 then
        raise("tide: global_unstructured: options must be a table such as {amount = 0.2}, " ..
            "got " .. type_of(a[a.n]))
    end
    if a.n > 2 then
        require("tide.op_args").no_extra(who, 3, compat.unpack(a, 3, a.n))
    end
    local kw = {}
    for k, v in pairs(opts) do
        kw[k] = v
    end
    for i, key in ipairs({ "pruning_method", "importance_scores" }) do
        if a[i] ~= nil then
            if kw[key] ~= nil then
                P.twice(who, key, i + 1)
            end
            kw[key] = a[i]
        end
    end
    local cls = global_method(kw.pruning_method)
    local all_scores = kw.importance_scores
    kw.pruning_method, kw.importance_scores = nil, nil
    if cls == Identity then
        if kw.amount ~= nil then
            raise("tide: global_unstructured: identity takes no amount; leave it out")
        end
    elseif cls == L1Unstructured or cls == RandomUnstructured then
        core._check_options(kw, who, { "amount", "importance_scores", "pruning_method" })
        check_amount(who, kw.amount)
    end
    if all_scores ~= nil and (type(all_scores) ~= "table" or is_tensor(all_scores)) then
        raise("tide: global_unstructured: importance_scores must be a table whose [i] scores " ..
            "parameters[i], got " .. type_of(all_scores))
    end
    for k in pairs(all_scores or {}) do
        if not (compat.is_integer(k) and k >= 1 and k <= #parameters) then
            raise(string.format("tide: global_unstructured: importance_scores[%s] names no " ..
                "parameter; its keys are 1..%d, as the parameters'", tostring(k),
                #parameters))
        end
    end
    local items, device = {}, nil
    for i = 1, #parameters do
        local pair = parameters[i]
        if type(pair) ~= "table" or is_tensor(pair) or pair.__ismodule then
            raise(string.format("tide: global_unstructured: parameters[%d] must be a " ..
                "{module, name} pair, got %s", i, type_of(pair)))
        end
        local module, name = pair[1], pair[2]
        local p, hook = target(who, module, name)
        local scores = all_scores and all_scores[i]
        check_scores(who, scores, p, name, "importance_scores[" .. i .. "]")
        device = device or p.device
        if p.device ~= device then
            raise(string.format("tide: global_unstructured: parameters[%d] is on %s, the " ..
                "first on %s; put them on one device", i, tostring(p.device),
                tostring(device)))
        end
        items[i] = { module = module, name = name, p = p, hook = hook, scores = scores }
    end
    local method = setmetatable({ _who = who, _label = "the parameters" }, cls)
    if next(kw) ~= nil then
        method:init(kw)
    else
        method:init()
    end
    -- one flat float64 vector of scores and of masks (float64 holds every dtype's values)
    local masks = autograd.no_grad(function()
        local flat_s, flat_m = {}, {}
        for i, it in ipairs(items) do
            local s = it.scores or current(it.module, it.name, it.hook, it.p)
            flat_s[i] = s:detach():reshape(-1):to("float64")
            local m = it.hook and rawget(it.module, it.name .. "_mask")
            flat_m[i] = m and m:reshape(-1):to("float64") or
                core.ones({ it.p:numel() }, { dtype = "float64", device = device })
        end
        local final = combine(method, core.cat(flat_s), core.cat(flat_m))
        local out, at = {}, 0
        for i, it in ipairs(items) do
            local n = it.p:numel()
            out[i] = final:narrow(1, at + 1, n):reshape(it.p.shape)
            at = at + n
        end
        return out
    end)
    for i, it in ipairs(items) do
        local p, hook = target(who, it.module, it.name)
        local m = made(CustomFromMask, who, masks[i])
        apply(who, it.module, it.name, m, nil, p, hook)
    end
end

-- remove(module, name): module[name] = orig * mask as a plain parameter again (the tensor that
-- was name_orig, holding the pruned values); the mask and the hook go
function M.remove(module, ...)
    local who = "remove"
    local name = call_args(who, { "name" }, ...).name
    if not is_module(module) then
        raise("tide: remove: expected a Module, got " .. type_of(module))
    end
    if type(name) ~= "string" then
        raise("tide: remove: name must be a string such as \"weight\", got " .. type_of(name))
    end
    local hook = hook_of(module, name)
    if not hook then
        raise(string.format("tide: %s: '%s' of %s is not pruned; prune it before removing " ..
            "the pruning", who, name, module.__name))
    end
    return remove_pruning(module, name, hook)
end

-- is_pruned(module): true when module or a module inside it has a pruned parameter
function M.is_pruned(module)
    if type(module) ~= "table" or not module.__ismodule or rawget(module, "_kind") == nil then
        raise("tide: is_pruned: expected a Module, got " .. type_of(module))
    end
    for _, m in ipairs(module:modules()) do
        for _, h in ipairs(rawget(m, "_forward_pre_hooks") or {}) do
            if is_method(h) then
                return true
            end
        end
    end
    return false
end

return M
