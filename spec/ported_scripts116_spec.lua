-- ported_scripts116_spec.lua — huggingface/pytorch-image-models (timm v0.9.x): timm/optim/
-- optim_factory.py (param_groups_weight_decay, _group, _layer_map, param_groups_layer_decay,
-- create_optimizer_v2 for 'adamw' and 'sgd' (nesterov)), timm/models/_manipulate.py
-- (group_with_matcher, group_parameters), timm/scheduler/scheduler.py (Scheduler with
-- t_in_epochs and lr_scale in update_groups) and timm/scheduler/cosine_lr.py
-- (CosineLRScheduler: warmup, cycles, k-decay), on a tiny ViT after timm/models/
-- vision_transformer.py (no_weight_decay, group_matcher), ported line for line. Then 3 steps
-- of AdamW with layer decay under the cosine schedule (step_update), against PyTorch 1.13.
-- The Python line stands above each Lua line that differs from it. Container children are
-- named from 1 in tide ("blocks.1" is PyTorch's "blocks.0"); layer ids stay 0-based (timm's
-- group names "layer_%d_decay"). Not ported: lamb.py, lookahead.py, the fused/bnb optimizers,
-- the scheduler's noise (noise_range_t None, as the defaults).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. a tiny VisionTransformer (timm/models/vision_transformer.py, the parts used here)
---------------------------------------------------------------------------------------------
local Attention = nn.Module:extend("Attention")
function Attention:init(dim, num_heads)
    self.num_heads = num_heads
    -- self.head_dim = dim // num_heads
    self.head_dim = math.floor(dim / num_heads)
    self.scale = self.head_dim ^ -0.5
    -- self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
    self.qkv = nn.Linear(dim, dim * 3, { bias = true })
    self.proj = nn.Linear(dim, dim)
end

function Attention:forward(x)
    -- B, N, C = x.shape
    local B, N, C = x:size(1), x:size(2), x:size(3)
    -- qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
    local qkv = self.qkv(x):reshape(B, N, 3, self.num_heads, self.head_dim):permute(3, 1, 4, 2, 5)
    -- q, k, v = qkv.unbind(0)
    local q, k, v = qkv[1], qkv[2], qkv[3]
    q = q * self.scale
    -- attn = q @ k.transpose(-2, -1)
    local attn = q:matmul(k:transpose(-2, -1))
    -- attn = attn.softmax(dim=-1)
    attn = attn:softmax(-1)
    x = attn:matmul(v)
    -- x = x.transpose(1, 2).reshape(B, N, C)
    x = x:transpose(2, 3):reshape(B, N, C)
    return self.proj(x)
end

local Mlp = nn.Module:extend("Mlp")
function Mlp:init(in_features, hidden_features)
    self.fc1 = nn.Linear(in_features, hidden_features)
    self.act = nn.GELU()
    self.fc2 = nn.Linear(hidden_features, in_features)
end

function Mlp:forward(x)
    return self.fc2(self.act(self.fc1(x)))
end

local Block = nn.Module:extend("Block")
-- def __init__(self, dim, num_heads, mlp_ratio=2.):
function Block:init(dim, num_heads, mlp_ratio)
    mlp_ratio = mlp_ratio or 2
    -- self.norm1 = nn.LayerNorm(dim, eps=1e-6)
    self.norm1 = nn.LayerNorm(dim, { eps = 1e-6 })
    self.attn = Attention(dim, num_heads)
    self.norm2 = nn.LayerNorm(dim, { eps = 1e-6 })
    -- self.mlp = Mlp(dim, int(dim * mlp_ratio))
    self.mlp = Mlp(dim, math.floor(dim * mlp_ratio))
end

function Block:forward(x)
    x = x + self.attn(self.norm1(x))
    x = x + self.mlp(self.norm2(x))
    return x
end

local PatchEmbed = nn.Module:extend("PatchEmbed")
function PatchEmbed:init(patch_size, in_chans, embed_dim)
    -- self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
    self.proj = nn.Conv2d(in_chans, embed_dim, { kernel_size = patch_size, stride = patch_size })
end

function PatchEmbed:forward(x)
    -- return self.proj(x).flatten(2).transpose(1, 2)
    return self.proj(x):flatten(3):transpose(2, 3)
end

local VisionTransformer = nn.Module:extend("VisionTransformer")
-- def __init__(self, img_size=8, patch_size=4, in_chans=3, num_classes=3, embed_dim=8, depth=2,
--              num_heads=2):
function VisionTransformer:init()
    local img_size, patch_size, in_chans, num_classes, embed_dim, depth, num_heads =
        8, 4, 3, 3, 8, 2, 2
    -- self.pretrained_cfg = {'classifier': 'head'}
    self.pretrained_cfg = { classifier = "head" }
    self.patch_embed = PatchEmbed(patch_size, in_chans, embed_dim)
    -- num_patches = (img_size // patch_size) ** 2
    local num_patches = math.floor(img_size / patch_size) ^ 2
    self.cls_token = nn.Parameter(tide.zeros(1, 1, embed_dim))
    self.pos_embed = nn.Parameter(tide.randn(1, num_patches + 1, embed_dim) * .02)
    -- self.blocks = nn.Sequential(*[Block(embed_dim, num_heads) for _ in range(depth)])
    local blocks = {}
    for _ = 1, depth do
        blocks[#blocks + 1] = Block(embed_dim, num_heads)
    end
    self.blocks = nn.Sequential(unpack(blocks))
    self.norm = nn.LayerNorm(embed_dim, { eps = 1e-6 })
    self.head = nn.Linear(embed_dim, num_classes)
end

-- def no_weight_decay(self): return {'pos_embed', 'cls_token', 'dist_token'}
function VisionTransformer:no_weight_decay()
    -- a Python set: the names as keys
    return { pos_embed = true, cls_token = true, dist_token = true }
end

-- def group_matcher(self, coarse=False):
function VisionTransformer:group_matcher(coarse) -- luacheck: ignore
    -- return dict(
    --     stem=r'^cls_token|pos_embed|patch_embed',  # stem and embed
    --     blocks=[(r'^blocks\.(\d+)', None), (r'^norm', (99999,))]
    -- )
    -- (a Lua table keeps no order and group_with_matcher numbers the entries: the dict is a
    -- list of {name, spec} pairs; the regexes are Python's, read by re_compile below)
    return {
        { "stem", [[^cls_token|pos_embed|patch_embed]] },
        { "blocks", { { [[^blocks\.(\d+)]], nil }, { [[^norm]], { 99999 } } } },
    }
end

function VisionTransformer:forward(x)
    x = self.patch_embed(x)
    -- x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
    x = tide.cat({ self.cls_token:expand(x:size(1), -1, -1), x }, 2)
    x = x + self.pos_embed
    x = self.blocks(x)
    x = self.norm(x)
    -- return self.head(x[:, 0])
    return self.head(x[{ {}, 1 }])
end

---------------------------------------------------------------------------------------------
-- 2. timm/models/_manipulate.py: group_with_matcher, group_parameters
---------------------------------------------------------------------------------------------
-- re.compile(expr) for the regexes timm's group_matchers use (alternatives joined by |, \. and
-- \d, groups in parentheses): re.match anchors each alternative at the start; match returns
-- r.groups() as a list, or nil. -- GAP: Lua has no regex (a language gap, not tide's)
local function re_compile(expr)
    local alts = {}
    for alt in (expr .. "|"):gmatch("([^|]*)|") do
        alt = alt:gsub("^%^", ""):gsub("\\%.", "%%."):gsub("\\d", "%%d")
        alts[#alts + 1] = "^" .. alt
    end
    return {
        match = function(_, name)
            for _, pat in ipairs(alts) do
                local r = { name:match(pat) }
                if r[1] ~= nil then
                    -- a pattern without captures returns the whole match: no groups
                    return pat:find("%(") and r or {}
                end
            end
            return nil
        end,
    }
end

-- MATCH_PREV_GROUP = (99999,)
local MATCH_PREV_GROUP = { 99999 }

-- Python's sort of tuples: element by element, a shorter prefix first
local function tuple_lt(a, b)
    for i = 1, math.min(#a, #b) do
        if a[i] ~= b[i] then
            return a[i] < b[i]
        end
    end
    return #a < #b
end

-- def group_with_matcher(named_objects, group_matcher, return_values=False, reverse=False):
local function group_with_matcher(named_objects, group_matcher, return_values, reverse)
    -- if isinstance(group_matcher, dict):
    if type(group_matcher) == "table" and type(group_matcher[1][1]) == "string" then
        local compiled = {}
        -- for group_ordinal, (group_name, mspec) in enumerate(group_matcher.items()):
        for i, item in ipairs(group_matcher) do
            local group_ordinal, mspec = i - 1, item[2]
            -- if mspec is None: continue
            if mspec ~= nil then
                -- if isinstance(mspec, (tuple, list)):
                if type(mspec) == "table" then
                    for _, sspec in ipairs(mspec) do
                        -- compiled += [(re.compile(sspec[0]), (group_ordinal,), sspec[1])]
                        compiled[#compiled + 1] = { re_compile(sspec[1]), { group_ordinal },
                            sspec[2] }
                    end
                else
                    compiled[#compiled + 1] = { re_compile(mspec), { group_ordinal }, nil }
                end
            end
        end
        group_matcher = compiled
    end

    local function _get_grouping(name)
        -- if isinstance(group_matcher, (list, tuple)):
        if type(group_matcher) == "table" then
            -- for match_fn, prefix, suffix in group_matcher:
            for _, m in ipairs(group_matcher) do
                local match_fn, prefix, suffix = m[1], m[2], m[3]
                local r = match_fn:match(name)
                if r then
                    -- parts = (prefix, r.groups(), suffix)
                    -- return tuple(map(float, chain.from_iterable(filter(None, parts))))
                    local t = {}
                    for _, part in ipairs({ prefix, r, suffix or {} }) do
                        for _, e in ipairs(part) do
                            t[#t + 1] = tonumber(e)
                        end
                    end
                    return t
                end
            end
            -- return float('inf'),  # un-matched layers (neck, head) mapped to largest ordinal
            return { math.huge }
        else
            local ord = group_matcher(name)
            -- if not isinstance(ord, collections.abc.Iterable): return ord,
            if type(ord) ~= "table" then
                return { ord }
            end
            return ord
        end
    end

    -- grouping = defaultdict(list)  (keyed by the tuple: its string, the tuples in keys)
    local grouping, keys = {}, {}
    -- for k, v in named_objects:
    for _, kv in ipairs(named_objects) do
        local k, v = kv[1], kv[2]
        local g = _get_grouping(k)
        local key = table.concat(g, ",")
        if grouping[key] == nil then
            grouping[key] = {}
            keys[#keys + 1] = g
        end
        -- grouping[_get_grouping(k)].append(v if return_values else k)
        table.insert(grouping[key], return_values and v or k)
    end

    -- remap to integers
    local layer_id_to_param = {}
    local lid = -1
    -- for k in sorted(filter(lambda x: x is not None, grouping.keys())):
    table.sort(keys, tuple_lt)
    for _, k in ipairs(keys) do
        -- if lid < 0 or k[-1] != MATCH_PREV_GROUP[0]:
        if lid < 0 or k[#k] ~= MATCH_PREV_GROUP[1] then
            lid = lid + 1
        end
        -- layer_id_to_param[lid].extend(grouping[k])
        layer_id_to_param[lid] = layer_id_to_param[lid] or {}
        for _, n in ipairs(grouping[table.concat(k, ",")]) do
            table.insert(layer_id_to_param[lid], n)
        end
    end

    if reverse then
        assert(not return_values, "reverse mapping only sensible for name output")
        -- output reverse mapping
        local param_to_layer_id = {}
        -- for lid, lm in layer_id_to_param.items():
        for l, lm in pairs(layer_id_to_param) do
            for _, n in ipairs(lm) do
                param_to_layer_id[n] = l
            end
        end
        return param_to_layer_id
    end

    return layer_id_to_param
end

-- def group_parameters(module, group_matcher, return_values=False, reverse=False):
local function group_parameters(module, group_matcher, return_values, reverse)
    return group_with_matcher(module:named_parameters(), group_matcher, return_values, reverse)
end

---------------------------------------------------------------------------------------------
-- 3. timm/optim/optim_factory.py
---------------------------------------------------------------------------------------------
-- def param_groups_weight_decay(model, weight_decay=1e-5, no_weight_decay_list=()):
local function param_groups_weight_decay(model, weight_decay, no_weight_decay_list)
    weight_decay = weight_decay or 1e-5
    -- no_weight_decay_list = set(no_weight_decay_list)
    no_weight_decay_list = no_weight_decay_list or {}
    local decay = {}
    local no_decay = {}
    for name, param in model:named_parameters() do
        -- if not param.requires_grad: continue
        if param.requires_grad then
            -- if param.ndim <= 1 or name.endswith(".bias") or name in no_weight_decay_list:
            if param.ndim <= 1 or name:sub(-5) == ".bias" or no_weight_decay_list[name] then
                no_decay[#no_decay + 1] = param
            else
                decay[#decay + 1] = param
            end
        end
    end

    return {
        { params = no_decay, weight_decay = 0. },
        { params = decay, weight_decay = weight_decay } }
end

-- def _group(it, size): (itertools.islice in chunks of size, as a list of lists)
local function _group(it, size)
    local out = {}
    for i = 1, #it, size do
        local chunk = {}
        for j = i, math.min(i + size - 1, #it) do
            chunk[#chunk + 1] = it[j]
        end
        out[#out + 1] = chunk
    end
    return out
end

-- def _layer_map(model, layers_per_group=12, num_groups=None):
local function _layer_map(model, layers_per_group, num_groups)
    layers_per_group = layers_per_group or 12
    local function _in_head(n, hp)
        if not hp then
            return true
        -- elif isinstance(hp, (tuple, list)):
        elseif type(hp) == "table" then
            -- return any([n.startswith(hpi) for hpi in hp])
            for _, hpi in ipairs(hp) do
                if n:sub(1, #hpi) == hpi then
                    return true
                end
            end
            return false
        else
            -- return n.startswith(hp)
            return n:sub(1, #hp) == hp
        end
    end

    -- head_prefix = getattr(model, 'pretrained_cfg', {}).get('classifier', None)
    local head_prefix = (model.pretrained_cfg or {}).classifier
    local names_trunk = {}
    local names_head = {}
    for n, _ in model:named_parameters() do
        -- names_head.append(n) if _in_head(n, head_prefix) else names_trunk.append(n)
        table.insert(_in_head(n, head_prefix) and names_head or names_trunk, n)
    end

    -- group non-head layers
    local num_trunk_layers = #names_trunk
    if num_groups ~= nil then
        -- layers_per_group = -(num_trunk_layers // -num_groups)
        layers_per_group = -math.floor(num_trunk_layers / -num_groups)
    end
    -- names_trunk = list(_group(names_trunk, layers_per_group))
    names_trunk = _group(names_trunk, layers_per_group)

    local num_trunk_groups = #names_trunk
    -- layer_map = {n: i for i, l in enumerate(names_trunk) for n in l}
    local layer_map = {}
    for i, l in ipairs(names_trunk) do
        for _, n in ipairs(l) do
            layer_map[n] = i - 1
        end
    end
    -- layer_map.update({n: num_trunk_groups for n in names_head})
    for _, n in ipairs(names_head) do
        layer_map[n] = num_trunk_groups
    end
    return layer_map
end

-- def param_groups_layer_decay(model, weight_decay=0.05, no_weight_decay_list=(),
--                              layer_decay=.75, end_layer_decay=None, verbose=False):
local function param_groups_layer_decay(model, opts)
    opts = opts or {}
    local weight_decay = opts.weight_decay or 0.05
    local layer_decay = opts.layer_decay or .75
    -- no_weight_decay_list = set(no_weight_decay_list)
    local no_weight_decay_list = opts.no_weight_decay_list or {}
    local param_group_names = {} -- NOTE for debugging
    -- param_groups = {}  (a dict in insertion order: the names in order beside it)
    local param_groups, order = {}, {}

    local layer_map
    -- if hasattr(model, 'group_matcher'):
    if model.group_matcher ~= nil then
        -- FIXME interface needs more work
        -- layer_map = group_parameters(model, model.group_matcher(coarse=False), reverse=True)
        layer_map = group_parameters(model, model:group_matcher(false), false, true)
    else
        -- fallback
        layer_map = _layer_map(model)
    end
    -- num_layers = max(layer_map.values()) + 1
    local num_layers = -math.huge
    for _, v in pairs(layer_map) do
        num_layers = math.max(num_layers, v)
    end
    num_layers = num_layers + 1
    local layer_max = num_layers - 1
    -- layer_scales = list(layer_decay ** (layer_max - i) for i in range(num_layers))
    local layer_scales = {}
    for i = 0, num_layers - 1 do
        layer_scales[i + 1] = layer_decay ^ (layer_max - i)
    end

    for name, param in model:named_parameters() do
        -- if not param.requires_grad: continue
        if param.requires_grad then
            local g_decay, this_decay
            -- no decay: all 1D parameters and model specific ones
            -- if param.ndim == 1 or name in no_weight_decay_list:
            if param.ndim == 1 or no_weight_decay_list[name] then
                g_decay = "no_decay"
                this_decay = 0.
            else
                g_decay = "decay"
                this_decay = weight_decay
            end

            -- layer_id = layer_map.get(name, layer_max)
            local layer_id = layer_map[name] or layer_max
            local group_name = string.format("layer_%d_%s", layer_id, g_decay)

            if param_groups[group_name] == nil then
                -- this_scale = layer_scales[layer_id]
                local this_scale = layer_scales[layer_id + 1]
                param_group_names[group_name] = {
                    lr_scale = this_scale,
                    weight_decay = this_decay,
                    param_names = {},
                }
                param_groups[group_name] = {
                    lr_scale = this_scale,
                    weight_decay = this_decay,
                    params = {},
                }
                order[#order + 1] = group_name
            end

            table.insert(param_group_names[group_name].param_names, name)
            table.insert(param_groups[group_name].params, param)
        end
    end

    -- if verbose: _logger.info(... json.dumps(param_group_names, indent=2))
    -- (the names come back as a second result, for the check below)

    -- return list(param_groups.values())
    local values = {}
    for i, gname in ipairs(order) do
        values[i] = param_groups[gname]
    end
    return values, param_group_names, order
end

-- optimizers to default to multi-tensor
local _DEFAULT_FOREACH = { lion = true }

-- def create_optimizer_v2(model_or_params, opt='sgd', lr=None, weight_decay=0., momentum=0.9,
--         foreach=None, filter_bias_and_bn=True, layer_decay=None, param_group_fn=None, **kwargs):
local NAMED = { opt = true, lr = true, weight_decay = true, momentum = true, foreach = true,
    filter_bias_and_bn = true, layer_decay = true, param_group_fn = true }
local function create_optimizer_v2(model_or_params, args)
    args = args or {}
    local opt = args.opt or "sgd"
    local lr = args.lr
    local weight_decay = args.weight_decay or 0.
    local momentum = args.momentum or 0.9
    local foreach = args.foreach
    local filter_bias_and_bn = args.filter_bias_and_bn ~= false
    local layer_decay, param_group_fn = args.layer_decay, args.param_group_fn
    local parameters
    -- if isinstance(model_or_params, nn.Module):
    if type(model_or_params) == "table" and model_or_params.__ismodule then
        -- a model was passed in, extract parameters and add weight decays to appropriate layers
        local no_weight_decay = {}
        -- if hasattr(model_or_params, 'no_weight_decay'):
        if model_or_params.no_weight_decay ~= nil then
            no_weight_decay = model_or_params:no_weight_decay()
        end

        if param_group_fn then
            parameters = param_group_fn(model_or_params)
        elseif layer_decay ~= nil then
            parameters = param_groups_layer_decay(model_or_params, {
                weight_decay = weight_decay,
                layer_decay = layer_decay,
                no_weight_decay_list = no_weight_decay,
            })
            weight_decay = 0.
        -- elif weight_decay and filter_bias_and_bn:
        elseif weight_decay ~= 0 and filter_bias_and_bn then
            parameters = param_groups_weight_decay(model_or_params, weight_decay, no_weight_decay)
            weight_decay = 0.
        else
            parameters = model_or_params:parameters()
        end
    else
        -- iterable of parameters or param groups passed in
        parameters = model_or_params
    end

    local opt_lower = opt:lower()
    -- opt_split = opt_lower.split('_')
    local opt_split = {}
    for s in (opt_lower .. "_"):gmatch("([^_]*)_") do
        opt_split[#opt_split + 1] = s
    end
    -- opt_lower = opt_split[-1]
    opt_lower = opt_split[#opt_split]

    -- opt_args = dict(weight_decay=weight_decay, **kwargs)
    local opt_args = { weight_decay = weight_decay }
    for k, v in pairs(args) do
        if not NAMED[k] then
            opt_args[k] = v
        end
    end

    if lr ~= nil then
        -- opt_args.setdefault('lr', lr)
        if opt_args.lr == nil then opt_args.lr = lr end
    end

    if foreach == nil then
        if _DEFAULT_FOREACH[opt] then
            if opt_args.foreach == nil then opt_args.foreach = true end
        end
    else
        opt_args.foreach = foreach
    end

    local optimizer
    -- basic SGD & related
    if opt_lower == "sgd" or opt_lower == "nesterov" then
        -- NOTE 'sgd' refers to SGD + nesterov momentum for legacy / backwards compat reasons
        -- opt_args.pop('eps', None)
        opt_args.eps = nil
        -- optimizer = optim.SGD(parameters, momentum=momentum, nesterov=True, **opt_args)
        opt_args.momentum, opt_args.nesterov = momentum, true
        optimizer = optim.SGD(parameters, opt_args)
    elseif opt_lower == "momentum" then
        opt_args.eps = nil
        opt_args.momentum, opt_args.nesterov = momentum, false
        optimizer = optim.SGD(parameters, opt_args)
    elseif opt_lower == "adam" then
        optimizer = optim.Adam(parameters, opt_args)
    elseif opt_lower == "adamw" then
        -- optimizer = optim.AdamW(parameters, **opt_args)
        optimizer = optim.AdamW(parameters, opt_args)
    else
        -- (the other optimizers of timm's list are not ported here)
        error("Invalid optimizer " .. opt)
    end

    -- if len(opt_split) > 1: if opt_split[0] == 'lookahead': optimizer = Lookahead(optimizer)
    -- (Lookahead not ported)
    assert(#opt_split == 1, "lookahead is not ported")

    return optimizer
end

---------------------------------------------------------------------------------------------
-- 4. timm/scheduler/scheduler.py and cosine_lr.py
---------------------------------------------------------------------------------------------
-- class Scheduler:
local Scheduler = ported.class("Scheduler")
-- def __init__(self, optimizer, param_group_field, t_in_epochs=True, noise_range_t=None,
--              noise_type='normal', noise_pct=0.67, noise_std=1.0, noise_seed=None,
--              initialize=True):
function Scheduler:__init__(optimizer, param_group_field, opts)
    opts = opts or {}
    local initialize = opts.initialize ~= false
    self.optimizer = optimizer
    self.param_group_field = param_group_field
    -- self._initial_param_group_field = f"initial_{param_group_field}"
    self._initial_param_group_field = "initial_" .. param_group_field
    if initialize then
        for i, group in ipairs(self.optimizer.param_groups) do
            if group[param_group_field] == nil then
                -- raise KeyError(f"{param_group_field} missing from param_groups[{i}]")
                error(string.format("%s missing from param_groups[%d]", param_group_field, i - 1))
            end
            -- group.setdefault(self._initial_param_group_field, group[param_group_field])
            if group[self._initial_param_group_field] == nil then
                group[self._initial_param_group_field] = group[param_group_field]
            end
        end
    else
        for i, group in ipairs(self.optimizer.param_groups) do
            if group[self._initial_param_group_field] == nil then
                error(string.format("%s missing from param_groups[%d]",
                    self._initial_param_group_field, i - 1))
            end
        end
    end
    -- self.base_values = [group[self._initial_param_group_field] for group in ...param_groups]
    self.base_values = {}
    for i, group in ipairs(self.optimizer.param_groups) do
        self.base_values[i] = group[self._initial_param_group_field]
    end
    self.metric = nil -- any point to having this for all?
    -- self.t_in_epochs = t_in_epochs
    self.t_in_epochs = opts.t_in_epochs ~= false
    -- (noise_range_t, noise_type, noise_pct, noise_std, noise_seed: not ported)
    assert(opts.noise_range_t == nil, "the scheduler's noise is not ported")
    self:update_groups(self.base_values)
end

-- def _get_values(self, t: int, on_epoch: bool = True) -> Optional[List[float]]:
function Scheduler:_get_values(t, on_epoch)
    if on_epoch == nil then on_epoch = true end
    local proceed = (on_epoch and self.t_in_epochs) or (not on_epoch and not self.t_in_epochs)
    if not proceed then
        return nil
    end
    return self:_get_lr(t)
end

function Scheduler:step(epoch, metric)
    self.metric = metric
    -- values = self._get_values(epoch, on_epoch=True)
    local values = self:_get_values(epoch, true)
    if values ~= nil then
        -- values = self._add_noise(values, epoch)  (no noise: not ported)
        self:update_groups(values)
    end
end

function Scheduler:step_update(num_updates, metric)
    self.metric = metric
    local values = self:_get_values(num_updates, false)
    if values ~= nil then
        self:update_groups(values)
    end
end

function Scheduler:update_groups(values)
    -- if not isinstance(values, (list, tuple)):
    if type(values) ~= "table" then
        -- values = [values] * len(self.optimizer.param_groups)
        local v = values
        values = {}
        for i = 1, #self.optimizer.param_groups do
            values[i] = v
        end
    end
    -- for param_group, value in zip(self.optimizer.param_groups, values):
    for i, param_group in ipairs(self.optimizer.param_groups) do
        local value = values[i]
        -- if 'lr_scale' in param_group:
        if param_group.lr_scale ~= nil then
            param_group[self.param_group_field] = value * param_group.lr_scale
        else
            param_group[self.param_group_field] = value
        end
    end
end

-- class CosineLRScheduler(Scheduler):
local CosineLRScheduler = ported.class("CosineLRScheduler")
getmetatable(CosineLRScheduler).__index = Scheduler
-- def __init__(self, optimizer, t_initial, lr_min=0., cycle_mul=1., cycle_decay=1.,
--              cycle_limit=1, warmup_t=0, warmup_lr_init=0, warmup_prefix=False,
--              t_in_epochs=True, noise_range_t=None, noise_pct=0.67, noise_std=1.0,
--              noise_seed=42, k_decay=1.0, initialize=True):
function CosineLRScheduler:__init__(optimizer, t_initial, opts)
    opts = opts or {}
    local lr_min, cycle_mul = opts.lr_min or 0., opts.cycle_mul or 1.
    local cycle_decay, cycle_limit = opts.cycle_decay or 1., opts.cycle_limit or 1
    local warmup_t, warmup_lr_init = opts.warmup_t or 0, opts.warmup_lr_init or 0
    -- super().__init__(optimizer, param_group_field="lr", t_in_epochs=t_in_epochs, ...)
    Scheduler.__init__(self, optimizer, "lr", {
        t_in_epochs = opts.t_in_epochs, noise_range_t = opts.noise_range_t,
        initialize = opts.initialize,
    })

    assert(t_initial > 0)
    assert(lr_min >= 0)
    -- (the warning for t_initial == 1 and cycle_mul == 1 and cycle_decay == 1: not ported)
    self.t_initial = t_initial
    self.lr_min = lr_min
    self.cycle_mul = cycle_mul
    self.cycle_decay = cycle_decay
    self.cycle_limit = cycle_limit
    self.warmup_t = warmup_t
    self.warmup_lr_init = warmup_lr_init
    self.warmup_prefix = opts.warmup_prefix or false
    self.k_decay = opts.k_decay or 1.0
    -- if self.warmup_t:
    if self.warmup_t ~= 0 then
        -- self.warmup_steps = [(v - warmup_lr_init) / self.warmup_t for v in self.base_values]
        self.warmup_steps = {}
        for i, v in ipairs(self.base_values) do
            self.warmup_steps[i] = (v - warmup_lr_init) / self.warmup_t
        end
        -- super().update_groups(self.warmup_lr_init)
        Scheduler.update_groups(self, self.warmup_lr_init)
    else
        self.warmup_steps = {}
        for i = 1, #self.base_values do
            self.warmup_steps[i] = 1
        end
    end
end

function CosineLRScheduler:_get_lr(t)
    local lrs = {}
    if t < self.warmup_t then
        -- lrs = [self.warmup_lr_init + t * s for s in self.warmup_steps]
        for i, s in ipairs(self.warmup_steps) do
            lrs[i] = self.warmup_lr_init + t * s
        end
    else
        if self.warmup_prefix then
            t = t - self.warmup_t
        end

        local i, t_i, t_curr
        if self.cycle_mul ~= 1 then
            -- i = math.floor(math.log(1 - t / self.t_initial * (1 - self.cycle_mul),
            --                        self.cycle_mul))
            -- (Python's math.log(x, base) is log(x) / log(base); Lua 5.1's takes no base)
            i = math.floor(math.log(1 - t / self.t_initial * (1 - self.cycle_mul)) /
                math.log(self.cycle_mul))
            t_i = self.cycle_mul ^ i * self.t_initial
            t_curr = t - (1 - self.cycle_mul ^ i) / (1 - self.cycle_mul) * self.t_initial
        else
            -- i = t // self.t_initial
            i = math.floor(t / self.t_initial)
            t_i = self.t_initial
            t_curr = t - (self.t_initial * i)
        end

        local gamma = self.cycle_decay ^ i
        -- lr_max_values = [v * gamma for v in self.base_values]
        local lr_max_values = {}
        for j, v in ipairs(self.base_values) do
            lr_max_values[j] = v * gamma
        end
        local k = self.k_decay

        if i < self.cycle_limit then
            -- lrs = [self.lr_min + 0.5 * (lr_max - self.lr_min) *
            --        (1 + math.cos(math.pi * t_curr ** k / t_i ** k)) for lr_max in lr_max_values]
            for j, lr_max in ipairs(lr_max_values) do
                lrs[j] = self.lr_min + 0.5 * (lr_max - self.lr_min) *
                    (1 + math.cos(math.pi * t_curr ^ k / t_i ^ k))
            end
        else
            for j = 1, #self.base_values do
                lrs[j] = self.lr_min
            end
        end
    end

    return lrs
end

function CosineLRScheduler:get_cycle_length(cycles)
    -- cycles = max(1, cycles or self.cycle_limit)
    cycles = math.max(1, (cycles ~= nil and cycles ~= 0) and cycles or self.cycle_limit)
    if self.cycle_mul == 1.0 then
        return self.t_initial * cycles
    else
        -- return int(math.floor(-self.t_initial * (self.cycle_mul ** cycles - 1) /
        --                       (1 - self.cycle_mul)))
        return math.floor(-self.t_initial * (self.cycle_mul ^ cycles - 1) / (1 - self.cycle_mul))
    end
end

---------------------------------------------------------------------------------------------
-- 5. the checks against PyTorch 1.13 (the same script in Python, timm's code pasted in)
---------------------------------------------------------------------------------------------
-- every parameter k (0-based, named_parameters order) gets 0.3 sin(0.37 (j + 1) + 0.91 (k + 1))
-- over its elements j = 0, 1, ... (row-major)
local function set_weights(model)
    tide.no_grad(function()
        for k0, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local j = tide.arange(0, p:numel(), { dtype = "float64" })
            p:copy_((0.3 * tide.sin(0.37 * (j + 1) + 0.91 * k0)):view(p:size()))
        end
    end)
end

local function inputs()
    local j = tide.arange(0, 2 * 3 * 8 * 8, { dtype = "float64" })
    -- torch.cos(0.13 * j).float().view(2, 3, 8, 8), torch.tensor([0, 2])
    return tide.cos(0.13 * j):float():view(2, 3, 8, 8), tide.tensor({ 1, 3 })
end

-- sum of p * (1, 2, ..., numel) in float64, for each parameter
local function checksum(model)
    local out = {}
    for i, p in ipairs(model:parameters()) do
        local w = tide.arange(1, p:numel() + 1, { dtype = "float64" }):view(p:size())
        out[i] = (p:double() * w):sum():item()
    end
    return out
end

-- the names of PyTorch's model: blocks.0 is tide's blocks.1
local function torch_name(n)
    return (n:gsub("^blocks%.(%d+)", function(d) return "blocks." .. (tonumber(d) - 1) end))
end

describe("timm optim factory, param groups and cosine scheduler (ported_scripts116)", function()
    it("group_matcher maps the ViT's parameters to layers as timm's (stem, blocks, norm, head)",
        function()
            local model = VisionTransformer()
            local layer_map = group_parameters(model, model:group_matcher(), false, true)
            local want = { cls_token = 0, pos_embed = 0, ["patch_embed.proj.weight"] = 0,
                ["patch_embed.proj.bias"] = 0, ["norm.weight"] = 2, ["norm.bias"] = 2,
                ["head.weight"] = 3, ["head.bias"] = 3 }
            local n = 0
            for name, p in model:named_parameters() do
                n = n + 1
                local w = want[name]
                if w == nil then
                    w = tonumber(name:match("^blocks%.(%d+)"))
                end
                assert.are.equal(w, layer_map[name], name)
                assert.is_true(p.requires_grad)
            end
            assert.are.equal(32, n)
            -- the order of the names: PyTorch's (own parameters, then the children's)
            local names = {}
            for i, np in ipairs(model:named_parameters()) do
                names[i] = np[1]
            end
            assert.are.same({ "cls_token", "pos_embed", "patch_embed.proj.weight",
                "patch_embed.proj.bias", "blocks.1.norm1.weight" }, { unpack(names, 1, 5) })
            assert.are.same({ "norm.weight", "norm.bias", "head.weight", "head.bias" },
                { unpack(names, 29, 32) })
        end)

    it("_layer_map groups the trunk by count and puts the head last", function()
        local model = VisionTransformer()
        -- PyTorch's _layer_map(model, layers_per_group=6) and (model, num_groups=4): the layer
        -- of each parameter, in named_parameters order
        local want6 = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3,
            4, 4, 4, 4, 4, 4, 5, 5 }
        local want4 = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2,
            3, 3, 3, 3, 3, 3, 4, 4 }
        local m6, m4 = _layer_map(model, 6), _layer_map(model, nil, 4)
        for i, np in ipairs(model:named_parameters()) do
            assert.are.equal(want6[i], m6[np[1]], np[1])
            assert.are.equal(want4[i], m4[np[1]], np[1])
        end
    end)

    it("param_groups_weight_decay and create_optimizer_v2('sgd') train as PyTorch's", function()
        tide.manual_seed(0)
        local model = VisionTransformer()
        set_weights(model)
        local wd = param_groups_weight_decay(model, 0.05, model:no_weight_decay())
        -- PyTorch: 22 without decay (1-d, .bias, cls_token/pos_embed), 10 with
        assert.are.equal(22, #wd[1].params)
        assert.are.equal(10, #wd[2].params)
        assert.are.equal(0, wd[1].weight_decay)
        assert.are.equal(0.05, wd[2].weight_decay)
        -- a frozen parameter (requires_grad false) is in no group: `if not param.requires_grad`
        model.cls_token.requires_grad = false
        assert.are.equal(21, #param_groups_weight_decay(model, 0.05, model:no_weight_decay())[1]
            .params)
        model.cls_token.requires_grad = true

        local x, y = inputs()
        -- opt2 = create_optimizer_v2(model2, 'sgd', lr=0.1, weight_decay=1e-2, momentum=0.9)
        local opt2 = create_optimizer_v2(model, { opt = "sgd", lr = 0.1, weight_decay = 1e-2,
            momentum = 0.9 })
        assert.are.equal(2, #opt2.param_groups)
        local g1, g2 = opt2.param_groups[1], opt2.param_groups[2]
        assert.are.same({ 22, 0, true, 0.9 }, { #g1.params, g1.weight_decay, g1.nesterov,
            g1.momentum })
        assert.are.same({ 10, 1e-2, true, 0.9 }, { #g2.params, g2.weight_decay, g2.nesterov,
            g2.momentum })
        local loss
        for _ = 1, 2 do
            loss = F.cross_entropy(model(x), y)
            opt2:zero_grad()
            loss:backward()
            opt2:step()
        end
        assert_close_list({ 0.9708458185 }, { loss:item() }, 1e-5, "sgd loss")
        assert_close_list({ 0.7762589548, 10.99372889, -276.4141285, -3.971696058, 3.23787747,
            7.916956659, 94.09733024, 13.00495509, -42.66158846, -7.957047425, -3.328130001,
            3.860384278, 101.1917805, -13.83201964, 3.070858282, -6.855243829, -7.777280334,
            -2.668378334, -136.1258009, 14.44310093, -30.21574062, -1.354752995, -7.243550939,
            -7.496214665, -36.26740441, 1.122683773, 104.9195571, 5.02317524, -1.466695433,
            -9.48640725, -19.18842588, -1.730215713 }, checksum(model), 2e-4, "sgd weights")
    end)

    it("AdamW with layer decay under the cosine schedule: groups, lrs and weights as PyTorch's",
        function()
            tide.manual_seed(0)
            local model = VisionTransformer()
            set_weights(model)
            local groups, names, order = param_groups_layer_decay(model, {
                weight_decay = 0.05, no_weight_decay_list = model:no_weight_decay(),
                layer_decay = 0.75 })
            -- PyTorch's groups, in its dict order (layer_3_decay before layer_3_no_decay: the
            -- head's weight comes first)
            assert.are.same({ "layer_0_no_decay", "layer_0_decay", "layer_1_no_decay",
                "layer_1_decay", "layer_2_no_decay", "layer_2_decay", "layer_3_decay",
                "layer_3_no_decay" }, order)
            local scales = { 0.421875, 0.421875, 0.5625, 0.5625, 0.75, 0.75, 1, 1 }
            local decays = { 0, 0.05, 0, 0.05, 0, 0.05, 0.05, 0 }
            for i, g in ipairs(groups) do
                assert.are.equal(scales[i], g.lr_scale, order[i])
                assert.are.equal(decays[i], g.weight_decay, order[i])
            end
            local function tnames(gname)
                local out = {}
                for i, n in ipairs(names[gname].param_names) do
                    out[i] = torch_name(n)
                end
                return out
            end
            assert.are.same({ "cls_token", "pos_embed", "patch_embed.proj.bias" },
                tnames("layer_0_no_decay"))
            assert.are.same({ "patch_embed.proj.weight" }, tnames("layer_0_decay"))
            assert.are.same({ "blocks.0.norm1.weight", "blocks.0.norm1.bias",
                "blocks.0.attn.qkv.bias", "blocks.0.attn.proj.bias", "blocks.0.norm2.weight",
                "blocks.0.norm2.bias", "blocks.0.mlp.fc1.bias", "blocks.0.mlp.fc2.bias" },
                tnames("layer_1_no_decay"))
            assert.are.same({ "blocks.1.attn.qkv.weight", "blocks.1.attn.proj.weight",
                "blocks.1.mlp.fc1.weight", "blocks.1.mlp.fc2.weight" }, tnames("layer_2_decay"))
            assert.are.same({ "blocks.1.norm1.weight", "blocks.1.norm1.bias",
                "blocks.1.attn.qkv.bias", "blocks.1.attn.proj.bias", "blocks.1.norm2.weight",
                "blocks.1.norm2.bias", "blocks.1.mlp.fc1.bias", "blocks.1.mlp.fc2.bias",
                "norm.weight", "norm.bias" }, tnames("layer_2_no_decay"))
            assert.are.same({ "head.weight" }, tnames("layer_3_decay"))
            assert.are.same({ "head.bias" }, tnames("layer_3_no_decay"))

            local x, y = inputs()
            local opt = create_optimizer_v2(model, { opt = "adamw", lr = 1e-2,
                weight_decay = 0.05, layer_decay = 0.75 })
            -- sched = CosineLRScheduler(opt, t_initial=2, lr_min=1e-4, cycle_decay=0.5,
            --     cycle_limit=2, warmup_t=1, warmup_lr_init=1e-4, t_in_epochs=False)
            local sched = CosineLRScheduler(opt, 2, { lr_min = 1e-4, cycle_decay = 0.5,
                cycle_limit = 2, warmup_t = 1, warmup_lr_init = 1e-4, t_in_epochs = false })
            local function lrs()
                local out = {}
                for i, g in ipairs(opt.param_groups) do
                    out[i] = g.lr
                end
                return out
            end
            local function per_group(a, b, c, d)
                return { a, a, b, b, c, c, d, d }
            end
            assert_close_list(per_group(4.21875e-05, 5.625e-05, 7.5e-05, 0.0001), lrs(), 1e-12,
                "lr0")
            assert.are.equal(1e-2, opt.param_groups[1].initial_lr)
            local want_lrs = {
                per_group(0.00213046875, 0.002840625, 0.0037875, 0.00505),
                per_group(0.002109375, 0.0028125, 0.00375, 0.005),
                per_group(0.00107578125, 0.001434375, 0.0019125, 0.00255),
            }
            local losses = {}
            local num_updates = 0
            for step = 1, 3 do
                local loss = F.cross_entropy(model(x), y)
                losses[#losses + 1] = loss:item()
                opt:zero_grad()
                loss:backward()
                opt:step()
                num_updates = num_updates + 1
                sched:step_update(num_updates)
                assert_close_list(want_lrs[step], lrs(), 1e-12, "lr " .. step)
            end
            assert_close_list({ 1.043942928, 1.043538332, 1.023462296 }, losses, 1e-5, "losses")
            assert_close_list({ 0.7695488445, 10.95879197, -276.0760688, -4.037627753,
                3.269766124, 7.744098637, 86.64636824, 13.02042987, -42.63510988, -7.960322203,
                -3.282432497, 3.710005265, 104.4973606, -13.61856066, 2.068279135, -6.859264784,
                -8.005864099, -2.657720696, -145.4978715, 14.84219806, -30.49827844,
                -1.355378415, -7.357137382, -7.252690062, -40.58410205, 1.367147602,
                105.1840642, 5.022297964, -2.007126027, -7.818874557, -19.32032474,
                -1.695101053 }, checksum(model), 2e-4, "adamw weights")
        end)

    it("CosineLRScheduler's cycle_mul, k_decay, cycle_limit, step and get_cycle_length",
        function()
            -- o3 = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.5)
            local o3 = optim.SGD({ nn.Parameter(tide.zeros(1)) }, { lr = 0.5 })
            local s3 = CosineLRScheduler(o3, 2, { lr_min = 0.01, cycle_mul = 2., cycle_decay = 0.5,
                cycle_limit = 3, k_decay = 1.5 })
            local got = {}
            for t = 0, 15 do
                got[#got + 1] = s3:_get_lr(t)[1]
            end
            assert_close_list({ 0.5, 0.3637838809, 0.25, 0.2408655439, 0.1832819008,
                0.07568275305, 0.125, 0.1244466883, 0.1206230731, 0.1106744048, 0.09303091082,
                0.0685646615, 0.04147298584, 0.01909808541, 0.01, 0.01 }, got, 1e-9, "cyc")
            assert.are.equal(14, s3:get_cycle_length())
            assert.are.equal(6, s3:get_cycle_length(2))
            s3:step(3)
            assert_close_list({ 0.2408655439 }, { o3.param_groups[1].lr }, 1e-9, "step")
            -- t_in_epochs: step_update leaves the lr as it is
            s3:step_update(5)
            assert_close_list({ 0.2408655439 }, { o3.param_groups[1].lr }, 1e-9, "step_update")
        end)
end)
