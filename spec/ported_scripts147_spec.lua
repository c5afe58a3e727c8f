-- ported_scripts147_spec.lua — microsoft/LoRA's loralib/layers.py (LoRALayer, Embedding, Linear
-- with fan_in_fan_out, MergedLinear with enable_lora / lora_ind / zero_pad / merge_AB through
-- F.conv1d groups, ConvLoRA and Conv2d; merge on eval(), unmerge on train()) and loralib/utils.py
-- (mark_only_lora_as_trainable, lora_state_dict with bias 'none' / 'all' / 'lora_only'), ported
-- line for line at tiny sizes; a tiny model (Embedding 10 x 6 -> MergedLinear 6 -> 3*6 with
-- enable_lora {true, false, true} -> Linear 6 -> 3) trained 2 Adam steps, LoRA parameters only.
-- Weights are set by a formula on both sides; the values are PyTorch 1.13's.
-- The Python line stands above each Lua line that differs from it.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore
local idiv = require("tide._compat").idiv

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- loralib/layers.py
---------------------------------------------------------------------------------------------
-- class LoRALayer():
-- GAP: Lua classes have one base: LoRALayer is a mixin (its __init__ a function, the classes
-- that take it listed in LORA_LAYERS for utils.py's isinstance)
local LoRALayer = {}
-- def __init__(self, r, lora_alpha, lora_dropout, merge_weights):
function LoRALayer.__init__(self, r, lora_alpha, lora_dropout, merge_weights)
    self.r = r
    self.lora_alpha = lora_alpha
    -- Optional dropout
    if lora_dropout > 0 then
        self.lora_dropout = nn.Dropout({ p = lora_dropout })
    else
        -- self.lora_dropout = lambda x: x
        self.lora_dropout = function(x) return x end
    end
    -- Mark the weight as unmerged
    self.merged = false
    self.merge_weights = merge_weights
end

-- sum(enable_lora) and any(enable_lora) of a list of booleans
local function sum(bools)
    local n = 0
    for _, b in ipairs(bools) do
        n = n + (b and 1 or 0)
    end
    return n
end
local function any(bools) return sum(bools) > 0 end

-- class Embedding(nn.Embedding, LoRALayer):
local Embedding = nn.Embedding:extend("LoRAEmbedding")
-- def __init__(self, num_embeddings, embedding_dim, r=0, lora_alpha=1, merge_weights=True,
--              **kwargs):
function Embedding:init(num_embeddings, embedding_dim, r, lora_alpha, merge_weights, kwargs)
    r, lora_alpha = r or 0, lora_alpha or 1
    if merge_weights == nil then merge_weights = true end
    nn.Embedding.init(self, num_embeddings, embedding_dim, kwargs)
    -- LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=0,
    --                    merge_weights=merge_weights)
    LoRALayer.__init__(self, r, lora_alpha, 0, merge_weights)
    -- Actual trainable parameters
    if r > 0 then
        -- self.lora_A = nn.Parameter(self.weight.new_zeros((r, num_embeddings)))
        self.lora_A = nn.Parameter(self.weight:new_zeros({ r, num_embeddings }))
        self.lora_B = nn.Parameter(self.weight:new_zeros({ embedding_dim, r }))
        self.scaling = self.lora_alpha / self.r
        -- Freezing the pre-trained weight matrix
        self.weight.requires_grad = false
    end
    self:reset_parameters()
end

function Embedding:reset_parameters()
    nn.Embedding.reset_parameters(self)
    -- if hasattr(self, 'lora_A'):
    if self.lora_A ~= nil then
        -- initialize A the same way as the default for nn.Linear and B to zero
        nn.init.zeros_(self.lora_A)
        nn.init.normal_(self.lora_B)
    end
end

-- def train(self, mode: bool = True):
function Embedding:train(mode)
    if mode == nil then mode = true end
    nn.Embedding.train(self, mode)
    if mode then
        if self.merge_weights and self.merged then
            -- Make sure that the weights are not merged
            if self.r > 0 then
                -- self.weight.data -= (self.lora_B @ self.lora_A).transpose(0, 1) * self.scaling
                self.weight.data:sub_(self.lora_B:matmul(self.lora_A):transpose(1, 2)
                    * self.scaling)
            end
            self.merged = false
        end
    else
        if self.merge_weights and not self.merged then
            -- Merge the weights and mark it
            if self.r > 0 then
                -- self.weight.data += (self.lora_B @ self.lora_A).transpose(0, 1) * self.scaling
                self.weight.data:add_(self.lora_B:matmul(self.lora_A):transpose(1, 2)
                    * self.scaling)
            end
            self.merged = true
        end
    end
    return self
end

function Embedding:forward(x)
    if self.r > 0 and not self.merged then
        local result = nn.Embedding.forward(self, x)
        -- after_A = F.embedding(
        --     x, self.lora_A.transpose(0, 1), self.padding_idx, self.max_norm,
        --     self.norm_type, self.scale_grad_by_freq, self.sparse
        -- )
        local after_A = F.embedding(x, self.lora_A:transpose(1, 2), {
            padding_idx = self.padding_idx, max_norm = self.max_norm, norm_type = self.norm_type,
            scale_grad_by_freq = self.scale_grad_by_freq, sparse = self.sparse })
        -- result += (after_A @ self.lora_B.transpose(0, 1)) * self.scaling
        result = result + after_A:matmul(self.lora_B:transpose(1, 2)) * self.scaling
        return result
    else
        return nn.Embedding.forward(self, x)
    end
end

-- class Linear(nn.Linear, LoRALayer):
local Linear = nn.Linear:extend("LoRALinear")
-- def __init__(self, in_features, out_features, r=0, lora_alpha=1, lora_dropout=0.,
--              fan_in_fan_out=False, merge_weights=True, **kwargs):
function Linear:init(in_features, out_features, opts)
    opts = opts or {}
    local r, lora_alpha, lora_dropout = opts.r or 0, opts.lora_alpha or 1, opts.lora_dropout or 0
    local fan_in_fan_out, merge_weights = opts.fan_in_fan_out or false, opts.merge_weights
    if merge_weights == nil then merge_weights = true end
    -- nn.Linear.__init__(self, in_features, out_features, **kwargs)
    nn.Linear.init(self, in_features, out_features, opts.bias)
    -- LoRALayer.__init__(self, r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
    --                    merge_weights=merge_weights)
    LoRALayer.__init__(self, r, lora_alpha, lora_dropout, merge_weights)

    self.fan_in_fan_out = fan_in_fan_out
    -- Actual trainable parameters
    if r > 0 then
        self.lora_A = nn.Parameter(self.weight:new_zeros({ r, in_features }))
        self.lora_B = nn.Parameter(self.weight:new_zeros({ out_features, r }))
        self.scaling = self.lora_alpha / self.r
        -- Freezing the pre-trained weight matrix
        self.weight.requires_grad = false
    end
    self:reset_parameters()
    if fan_in_fan_out then
        -- self.weight.data = self.weight.data.transpose(0, 1)
        self.weight.data = self.weight.data:transpose(1, 2)
    end
end

function Linear:reset_parameters()
    nn.Linear.reset_parameters(self)
    if self.lora_A ~= nil then
        -- initialize B the same way as the default for nn.Linear and A to zero
        -- nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.lora_A, { a = math.sqrt(5) })
        nn.init.zeros_(self.lora_B)
    end
end

function Linear:train(mode)
    if mode == nil then mode = true end
    -- def T(w):
    local function T(w)
        -- return w.transpose(0, 1) if self.fan_in_fan_out else w
        return self.fan_in_fan_out and w:transpose(1, 2) or w
    end
    nn.Linear.train(self, mode)
    if mode then
        if self.merge_weights and self.merged then
            -- Make sure that the weights are not merged
            if self.r > 0 then
                -- self.weight.data -= T(self.lora_B @ self.lora_A) * self.scaling
                self.weight.data:sub_(T(self.lora_B:matmul(self.lora_A)) * self.scaling)
            end
            self.merged = false
        end
    else
        if self.merge_weights and not self.merged then
            -- Merge the weights and mark it
            if self.r > 0 then
                -- self.weight.data += T(self.lora_B @ self.lora_A) * self.scaling
                self.weight.data:add_(T(self.lora_B:matmul(self.lora_A)) * self.scaling)
            end
            self.merged = true
        end
    end
    return self
end

function Linear:forward(x)
    local function T(w)
        return self.fan_in_fan_out and w:transpose(1, 2) or w
    end
    if self.r > 0 and not self.merged then
        -- result = F.linear(x, T(self.weight), bias=self.bias)
        local result = F.linear(x, T(self.weight), self.bias)
        -- result += (self.lora_dropout(x) @ self.lora_A.transpose(0, 1)
        --            @ self.lora_B.transpose(0, 1)) * self.scaling
        result = result + self.lora_dropout(x):matmul(self.lora_A:transpose(1, 2))
            :matmul(self.lora_B:transpose(1, 2)) * self.scaling
        return result
    else
        return F.linear(x, T(self.weight), self.bias)
    end
end

-- class MergedLinear(nn.Linear, LoRALayer):
local MergedLinear = nn.Linear:extend("LoRAMergedLinear")
-- def __init__(self, in_features, out_features, r=0, lora_alpha=1, lora_dropout=0.,
--              enable_lora=[False], fan_in_fan_out=False, merge_weights=True, **kwargs):
function MergedLinear:init(in_features, out_features, opts)
    opts = opts or {}
    local r, lora_alpha, lora_dropout = opts.r or 0, opts.lora_alpha or 1, opts.lora_dropout or 0
    local enable_lora = opts.enable_lora or { false }
    local fan_in_fan_out, merge_weights = opts.fan_in_fan_out or false, opts.merge_weights
    if merge_weights == nil then merge_weights = true end
    nn.Linear.init(self, in_features, out_features, opts.bias)
    LoRALayer.__init__(self, r, lora_alpha, lora_dropout, merge_weights)
    -- assert out_features % len(enable_lora) == 0, \
    --     'The length of enable_lora must divide out_features'
    assert(out_features % #enable_lora == 0, "The length of enable_lora must divide out_features")
    self.enable_lora = enable_lora
    self.fan_in_fan_out = fan_in_fan_out
    -- Actual trainable parameters
    if r > 0 and any(enable_lora) then
        -- self.lora_A = nn.Parameter(
        --     self.weight.new_zeros((r * sum(enable_lora), in_features)))
        self.lora_A = nn.Parameter(self.weight:new_zeros({ r * sum(enable_lora), in_features }))
        -- self.lora_B = nn.Parameter(
        --     self.weight.new_zeros((out_features // len(enable_lora) * sum(enable_lora), r))
        -- ) # weights for Conv1D with groups=sum(enable_lora)
        self.lora_B = nn.Parameter(self.weight:new_zeros({
            idiv(out_features, #enable_lora) * sum(enable_lora), r }))
        self.scaling = self.lora_alpha / self.r
        -- Freezing the pre-trained weight matrix
        self.weight.requires_grad = false
        -- Compute the indices
        -- self.lora_ind = self.weight.new_zeros(
        --     (out_features, ), dtype=torch.bool
        -- ).view(len(enable_lora), -1)
        self.lora_ind = self.weight:new_zeros({ out_features }, { dtype = "bool" })
            :view(#enable_lora, -1)
        -- self.lora_ind[enable_lora, :] = True
        self.lora_ind[{ tide.tensor(enable_lora), {} }] = true
        self.lora_ind = self.lora_ind:view(-1)
    end
    self:reset_parameters()
    if fan_in_fan_out then
        self.weight.data = self.weight.data:transpose(1, 2)
    end
end

function MergedLinear:reset_parameters()
    nn.Linear.reset_parameters(self)
    if self.lora_A ~= nil then
        -- initialize A the same way as the default for nn.Linear and B to zero
        nn.init.kaiming_uniform_(self.lora_A, { a = math.sqrt(5) })
        nn.init.zeros_(self.lora_B)
    end
end

function MergedLinear:zero_pad(x)
    -- result = x.new_zeros((len(self.lora_ind), *x.shape[1:]))
    local result = x:new_zeros({ #self.lora_ind, unpack(x.shape, 2) })
    result[self.lora_ind] = x
    return result
end

function MergedLinear:merge_AB()
    local function T(w)
        return self.fan_in_fan_out and w:transpose(1, 2) or w
    end
    -- delta_w = F.conv1d(
    --     self.lora_A.unsqueeze(0),
    --     self.lora_B.unsqueeze(-1),
    --     groups=sum(self.enable_lora)
    -- ).squeeze(0)
    local delta_w = F.conv1d(self.lora_A:unsqueeze(1), self.lora_B:unsqueeze(-1), nil,
        { groups = sum(self.enable_lora) }):squeeze(1)
    return T(self:zero_pad(delta_w))
end

function MergedLinear:train(mode)
    if mode == nil then mode = true end
    nn.Linear.train(self, mode)
    if mode then
        if self.merge_weights and self.merged then
            -- Make sure that the weights are not merged
            if self.r > 0 and any(self.enable_lora) then
                -- self.weight.data -= self.merge_AB() * self.scaling
                self.weight.data:sub_(self:merge_AB() * self.scaling)
            end
            self.merged = false
        end
    else
        if self.merge_weights and not self.merged then
            -- Merge the weights and mark it
            if self.r > 0 and any(self.enable_lora) then
                self.weight.data:add_(self:merge_AB() * self.scaling)
            end
            self.merged = true
        end
    end
    return self
end

function MergedLinear:forward(x)
    local function T(w)
        return self.fan_in_fan_out and w:transpose(1, 2) or w
    end
    if self.merged then
        return F.linear(x, T(self.weight), self.bias)
    else
        local result = F.linear(x, T(self.weight), self.bias)
        if self.r > 0 then
            -- result += self.lora_dropout(x) @ T(self.merge_AB().T) * self.scaling
            result = result + self.lora_dropout(x):matmul(T(self:merge_AB().T)) * self.scaling
        end
        return result
    end
end

-- class ConvLoRA(nn.Module, LoRALayer):
local ConvLoRA = nn.Module:extend("ConvLoRA")
-- def __init__(self, conv_module, in_channels, out_channels, kernel_size, r=0, lora_alpha=1,
--              lora_dropout=0., merge_weights=True, **kwargs):
function ConvLoRA:init(conv_module, in_channels, out_channels, kernel_size, opts)
    opts = opts or {}
    local r, lora_alpha, lora_dropout = opts.r or 0, opts.lora_alpha or 1, opts.lora_dropout or 0
    local merge_weights = opts.merge_weights
    if merge_weights == nil then merge_weights = true end
    -- self.conv = conv_module(in_channels, out_channels, kernel_size, **kwargs)
    self.conv = conv_module(in_channels, out_channels, kernel_size, { padding = opts.padding })
    -- for name, param in self.conv.named_parameters():
    for name, param in self.conv:named_parameters() do
        self:register_parameter(name, param)
    end
    LoRALayer.__init__(self, r, lora_alpha, lora_dropout, merge_weights)
    -- assert isinstance(kernel_size, int)
    assert(math.type == nil or math.type(kernel_size) == "integer")
    -- Actual trainable parameters
    if r > 0 then
        -- self.lora_A = nn.Parameter(
        --     self.conv.weight.new_zeros((r * kernel_size, in_channels * kernel_size))
        -- )
        self.lora_A = nn.Parameter(
            self.conv.weight:new_zeros({ r * kernel_size, in_channels * kernel_size }))
        -- self.lora_B = nn.Parameter(
        --   self.conv.weight.new_zeros((out_channels//self.conv.groups*kernel_size,
        --                               r*kernel_size))
        -- )
        self.lora_B = nn.Parameter(self.conv.weight:new_zeros({
            idiv(out_channels, self.conv.groups) * kernel_size, r * kernel_size }))
        self.scaling = self.lora_alpha / self.r
        -- Freezing the pre-trained weight matrix
        self.conv.weight.requires_grad = false
    end
    self:reset_parameters()
    self.merged = false
end

function ConvLoRA:reset_parameters()
    self.conv:reset_parameters()
    if self.lora_A ~= nil then
        -- initialize A the same way as the default for nn.Linear and B to zero
        nn.init.kaiming_uniform_(self.lora_A, { a = math.sqrt(5) })
        nn.init.zeros_(self.lora_B)
    end
end

function ConvLoRA:train(mode)
    if mode == nil then mode = true end
    -- super(ConvLoRA, self).train(mode)
    nn.Module.train(self, mode)
    if mode then
        if self.merge_weights and self.merged then
            if self.r > 0 then
                -- Make sure that the weights are not merged
                -- self.conv.weight.data -= (self.lora_B @ self.lora_A)
                --     .view(self.conv.weight.shape) * self.scaling
                self.conv.weight.data:sub_(self.lora_B:matmul(self.lora_A)
                    :view(self.conv.weight.shape) * self.scaling)
            end
            self.merged = false
        end
    else
        if self.merge_weights and not self.merged then
            if self.r > 0 then
                -- Merge the weights and mark it
                self.conv.weight.data:add_(self.lora_B:matmul(self.lora_A)
                    :view(self.conv.weight.shape) * self.scaling)
            end
            self.merged = true
        end
    end
    return self
end

function ConvLoRA:forward(x)
    if self.r > 0 and not self.merged then
        -- return self.conv._conv_forward(
        --     x,
        --     self.conv.weight + (self.lora_B @ self.lora_A).view(self.conv.weight.shape)
        --         * self.scaling,
        --     self.conv.bias
        -- )
        return self.conv:_conv_forward(x, self.conv.weight + self.lora_B:matmul(self.lora_A)
            :view(self.conv.weight.shape) * self.scaling, self.conv.bias)
    end
    return self.conv(x)
end

-- class Conv2d(ConvLoRA):
local Conv2d = ConvLoRA:extend("LoRAConv2d")
-- def __init__(self, *args, **kwargs):
function Conv2d:init(...)
    -- super(Conv2d, self).__init__(nn.Conv2d, *args, **kwargs)
    ConvLoRA.init(self, nn.Conv2d, ...)
end

local LORA_LAYERS = { Embedding, Linear, MergedLinear, ConvLoRA }

---------------------------------------------------------------------------------------------
-- loralib/utils.py
---------------------------------------------------------------------------------------------
-- 'lora_' in n
local function has(n, s) return n:find(s, 1, true) ~= nil end

-- def mark_only_lora_as_trainable(model: nn.Module, bias: str = 'none') -> None:
local function mark_only_lora_as_trainable(model, bias)
    bias = bias or "none"
    for n, p in model:named_parameters() do
        if not has(n, "lora_") then
            p.requires_grad = false
        end
    end
    if bias == "none" then
        return
    elseif bias == "all" then
        for n, p in model:named_parameters() do
            if has(n, "bias") then
                p.requires_grad = true
            end
        end
    elseif bias == "lora_only" then
        for _, m in ipairs(model:modules()) do
            -- if isinstance(m, LoRALayer) and \
            --     hasattr(m, 'bias') and \
            --     m.bias is not None:
            if tide.isinstance(m, LORA_LAYERS) and m.bias ~= nil then
                m.bias.requires_grad = true
            end
        end
    else
        -- raise NotImplementedError
        error("NotImplementedError")
    end
end

-- def lora_state_dict(model: nn.Module, bias: str = 'none') -> Dict[str, torch.Tensor]:
-- GAP: a Lua table has no order: the result is a list of {key, tensor} in PyTorch's dict order
local function lora_state_dict(model, bias)
    bias = bias or "none"
    local my_state_dict = model:state_dict()
    local to_return, seen = {}, {}
    local function put(k)
        if not seen[k] then
            seen[k] = true
            to_return[#to_return + 1] = { k, my_state_dict[k] }
        end
    end
    if bias == "none" then
        -- return {k: my_state_dict[k] for k in my_state_dict if 'lora_' in k}
        for k in my_state_dict do
            if has(k, "lora_") then put(k) end
        end
    elseif bias == "all" then
        -- return {k: my_state_dict[k] for k in my_state_dict if 'lora_' in k or 'bias' in k}
        for k in my_state_dict do
            if has(k, "lora_") or has(k, "bias") then put(k) end
        end
    elseif bias == "lora_only" then
        for k in my_state_dict do
            if has(k, "lora_") then
                put(k)
                -- bias_name = k.split('lora_')[0]+'bias'
                local bias_name = k:sub(1, k:find("lora_", 1, true) - 1) .. "bias"
                if my_state_dict[bias_name] ~= nil then
                    put(bias_name)
                end
            end
        end
    else
        error("NotImplementedError")
    end
    return to_return
end

---------------------------------------------------------------------------------------------
-- the check: weights by formula, as /tmp's PyTorch script
---------------------------------------------------------------------------------------------
-- (torch.sin(torch.arange(0., n) * 0.37 + c) * 0.5).view(*shape)
local function fill(shape, c)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.arange(0, n, { dtype = "float32" }) * 0.37 + c):sin():mul(0.5):view(shape)
end

local function values(t)
    return t:detach():contiguous():view(-1):tolist()
end

local Model = nn.Module:extend("LoRAModel")
function Model:init()
    self.emb = Embedding(10, 6, 2)
    self.qkv = MergedLinear(6, 18, { r = 2, enable_lora = { true, false, true } })
    self.head = Linear(6, 3, { r = 2, fan_in_fan_out = true })
end
function Model:forward(ids)
    local x = self.emb(ids)
    -- q, k, v = self.qkv(x).split(6, dim=-1)
    local q, k, v = unpack(self.qkv(x):split(6, -1))
    local h = tide.tanh(q) * v + k
    return self.head(h)
end

local function new_model()
    local m = Model()
    local c = 0
    tide.no_grad(function()
        for _, p in m:named_parameters() do
            c = c + 1
            p:copy_(fill(p.shape, c))
        end
    end)
    return m
end

-- PyTorch 1.13's values (/tmp/p147/ref.py)
local WANT = {
    emb_train = {
        -0.020875307, -0.24407326, -0.42364925, -0.52315831, -0.52888024, -0.45180839, 0.47694901,
        0.43826446, 0.36120361, 0.26088172, 0.14215916, 0.0035419613, -0.26330626, -0.1005721,
        0.096114278, 0.29491287, 0.45578864, 0.54279733, -0.41281581, -0.48985997, -0.49150354,
        -0.42991856, -0.32411161, -0.19177084, -0.37090769, -0.27147198, -0.11838523, 0.076656394,
        0.28271478, 0.45617127, -0.24780174, -0.424449, -0.52151048, -0.5261355, -0.44941422,
        -0.31874883, 0.44788018, 0.38479728, 0.28542295, 0.15376052, -0.0051339529, -0.17915998,
        0.3984544, 0.31685227, 0.18546632, 0.0089932494, -0.19131678, -0.37915289 },
    qkv_train = {
        0.25297105, -1.4661536, -0.21530907, 0.51104838, -0.77064127, 0.98992085, 0.72403008,
        -0.44098118, 1.2928026, 0.40609795, -0.41779816, 1.1179677, -0.41640037, -0.72735381,
        0.53111571, -1.2008972, -0.6222713, 0.42250943, -1.0855089, 0.11285505, 0.16093501,
        -0.82797682, 0.5515117, 0.15265603, -0.22062951, 1.1912905, 0.26387516, 0.01790753,
        1.0804923, -0.30543137, -0.085034899, 0.5652163, -0.9910959, -0.3952761, -0.065572165,
        -1.3012424, -0.76573193, 0.3212133, -0.63553882, -0.12351191, 0.64684582, -0.39440674,
        0.56048119, 0.88775879, -0.15023413, 0.82214093, 0.52219927, -0.43463039, 0.48124114,
        -0.21985036, -0.74338853, 0.28869575, -0.71198994, -0.76948953, 0.34065461, -1.2664226,
        -0.60576349, 0.79785734, -0.64436716, 0.65799129, 1.0734622, -0.5031625, 1.018554,
        0.7998746, -0.61966681, 0.9682712, -0.10395532, -1.0585938, 0.57079923, -0.79992914,
        -0.92454201, 0.59752142, -0.42338768, -0.080844864, -0.73395067, 0.22015798, 0.30994606,
        -0.18256325, 0.80381089, 0.47053784, 0.11089993, 0.92362332, 0.13836224, -0.07201384,
        0.39847839, -0.55192119, -0.35440883, 0.085344806, -0.85596102, -0.32823402, 0.38039666,
        -1.4473215, -0.4552322, 0.74960923, -0.77773023, 0.85382438, 0.97440219, -0.57140851,
        1.2001306, 0.64857537, -0.61830688, 1.1179261, -0.26150441, -0.98798048, 0.64253521,
        -1.0244244, -0.82357544, 0.62125659, -0.90160686, -0.17491458, 0.1946919, -0.69050676,
        0.32012296, 0.35804337, -0.15800726, 0.95656955, 0.48505497, -0.014801204, 0.89886075,
        -0.053111091, -0.20862025, 0.44521886, -0.76792556, -0.61195856, -0.079970181, -1.0789094,
        -0.66586733, -0.52941447, 0.22060674, -0.50484031, 0.033612601, 0.60297215, -0.064089149,
        0.6578095, 0.75236905, -0.039251924, 0.66111022, 0.25880492, -0.3511861, 0.27969733,
        -0.48469743, -0.86818886, -0.11103866, -0.79095984 },
    merge_AB = {
        0.1607361, 0.17824759, 0.17163414, 0.14179087, 0.092756815, 0.031168563, 0.1564306,
        0.20078334, 0.21796103, 0.20563883, 0.16548426, 0.1029322, 0.070301898, 0.11829668,
        0.15028058, 0.16192478, 0.15165316, 0.12085598, -0.052598964, -0.026066521, 0.0039939005,
        0.033513784, 0.058497716, 0.075564265, -0.14798732, -0.15679529, -0.14438178, -0.11242691,
        -0.065255553, -0.0092521552, -0.16596904, -0.2055103, -0.21723674, -0.1995613,
        -0.15487608, -0.089229129, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.1757258, 0.14511245, 0.094859153,
        0.031766906, -0.035624757, -0.098194763, 0.079655632, 0.090759568, 0.089579672,
        0.076275565, 0.052647937, 0.021894656, -0.058079448, -0.011066321, 0.037444275,
        0.080887184, 0.11338229, 0.13053165, -0.16543534, -0.10710382, -0.034276795, 0.043189764,
        0.11481064, 0.17089243, -0.18625821, -0.14711942, -0.088069096, -0.017098771, 0.056185663,
        0.12186563, -0.10965622, -0.11018213, -0.095795542, -0.068443418, -0.031827819,
        0.0090955207 },
    out_train = {
        0.92137241, 0.64735758, 0.23256561, 0.026769057, -0.21650833, -0.48244348, 0.089704797,
        -0.22603054, -0.56549585, 1.1258308, 0.83655518, 0.36919418, 0.22954887, -0.087918594,
        -0.4519974, 1.1524056, 0.8744089, 0.41918159, -0.033930272, -0.26026756, -0.50201756,
        -0.017357305, -0.23404102, -0.46983343 },
    emb_w_merged = {
        0.4523617, 0.48264459, 0.45043775, 0.37371394, 0.26786795, 0.14101206, -0.020875307,
        -0.24407326, -0.42364925, -0.52315831, -0.52888024, -0.45180839, -0.37090769, -0.27147198,
        -0.11838523, 0.076656394, 0.28271478, 0.45617127, 0.47694901, 0.43826446, 0.36120361,
        0.26088172, 0.14215916, 0.0035419613, -0.24780174, -0.424449, -0.52151048, -0.5261355,
        -0.44941422, -0.31874883, -0.26330626, -0.1005721, 0.096114278, 0.29491287, 0.45578864,
        0.54279733, 0.44788018, 0.38479728, 0.28542295, 0.15376052, -0.0051339529, -0.17915998,
        -0.41281581, -0.48985997, -0.49150354, -0.42991856, -0.32411161, -0.19177084,
        -0.081416562, 0.13534652, 0.33497095, 0.47677445, 0.53442824, 0.50325722, 0.3984544,
        0.31685227, 0.18546632, 0.0089932494, -0.19131678, -0.37915289 },
    qkv_w_merged = {
        -0.29803321, -0.38185385, -0.41399235, -0.39009887, -0.31340742, -0.19429778, 0.046643797,
        0.25140357, 0.42213705, 0.53573632, 0.57682621, 0.53984547, 0.45172545, 0.34753713,
        0.19631059, 0.018514775, -0.16178697, -0.32019162, -0.49841014, -0.51273698, -0.45766738,
        -0.34065431, -0.17753552, 0.0096118636, 0.080262892, 0.23740785, 0.3624208, 0.43838176,
        0.45500982, 0.41005436, 0.20261376, 0.015106611, -0.17444515, -0.34038621, -0.46025836,
        -0.51783645, -0.49957487, -0.45831275, -0.35501984, -0.20367733, -0.024768202, 0.15749407,
        0.31844017, 0.43628621, 0.49508345, 0.48687336, 0.41276711, 0.28279528, 0.11454774,
        -0.069203369, -0.24358726, -0.38500354, -0.47431087, -0.49942276, -0.45694023,
        -0.35261264, -0.20056038, -0.021364031, 0.16072471, 0.32105932, 0.43794072, 0.49554855,
        0.48608634, 0.41083488, 0.27997836, 0.11122794, -0.0725758, -0.24655762, -0.38716829,
        -0.47537813, -0.49924752, -0.45554611, -0.26232615, -0.12487875, 0.029470706, 0.17983046,
        0.30585262, 0.39047658, 0.53581858, 0.5306567, 0.45367342, 0.31528625, 0.13422787,
        -0.064997539, -0.27855626, -0.39484879, -0.45770085, -0.4586055, -0.39743969, -0.28248274,
        -0.2770181, -0.068104789, 0.15002418, 0.34784836, 0.49859306, 0.58185613, 0.3913157,
        0.33335301, 0.2302711, 0.096024528, -0.051218502, -0.19152942, -0.44627303, -0.5325371,
        -0.54672521, -0.48691618, -0.36120582, -0.18660821 },
    head_w_merged = {
        0.60217679, 0.50361091, 0.31024146, 0.25338143, 0.045626398, -0.19669425, -0.28069228,
        -0.39161766, -0.47583449, -0.4285726, -0.32775345, -0.20321581, -0.057798762, 0.15206383,
        0.32915223, 0.38226002, 0.49366248, 0.53615391 },
    head_w_unmerged = {
        0.49467909, 0.43489537, 0.31625062, 0.15480286, -0.027596761, -0.20626171, -0.35700959,
        -0.45943803, -0.49968365, -0.47229949, -0.38099185, -0.23811878, -0.063017003, 0.12061295,
        0.28791937, 0.41625682, 0.48825592, 0.49417186 },
    losses = {
        1.0942794, 1.0721632 },
    loss_after = 1.0530002,
    out_eval2 = {
        1.0679185, 0.83059233, 0.1038819, 0.018771008, -0.13770685, -0.5302788, 0.021883398,
        -0.16245572, -0.54011679, 1.2210224, 1.0067207, 0.27468905, 0.10491262, -0.069721855,
        -0.46422583, 1.3264287, 1.0983566, 0.32990766, -0.034682721, -0.18107498, -0.56317556,
        -0.016321957, -0.14952958, -0.54928875 },
    conv_train = {
        -0.81753361, -0.87950319, -0.73524094, -0.52634668, -0.41541535, -0.090028822, 0.13595068,
        0.013562322, 0.044370949, 0.2359243, 0.061488569, -0.29482096, -0.47082773, -0.65978146,
        -0.85970509, -0.83176154, -0.80548304, -0.91442931, -0.79813921, -0.56432182, -0.48368561,
        -0.20723033, 0.051946372, 0.00014048815, 0.072902769, 0.31992003, 0.19890311, -0.15899673,
        -0.36854422, -0.5025121, -0.69338983, -0.71814251, -0.68272257, -0.82335937, -0.75135911,
        -0.52542669, -0.48640031, -0.29766756, -0.041660219, -0.015614003, 0.08889094, 0.35671231,
        0.30609468, -0.0031761825, -0.21686205, -0.27704588, -0.43209425, -0.50606972 },
    conv_w_merged = {
        -0.29025018, -0.42973971, -0.51106626, -0.52322251, -0.46456304, -0.34302646, -0.13628091,
        0.079467274, 0.28446004, 0.45095262, 0.55641085, 0.58656126, 0.45502794, 0.33365557,
        0.16712406, -0.02202668, -0.20819616, -0.36618775, -0.41389546, -0.48289171, -0.4865309,
        -0.42432034, -0.30468047, -0.14380254, 0.045415461, 0.25021094, 0.42114183, 0.535074,
        0.57658601, 0.54005951, 0.35898417, 0.18035993, -0.022674322, -0.22263983, -0.39247286,
        -0.50918633, -0.47946423, -0.4682855, -0.39372647, -0.2658788, -0.10204594, 0.075599417,
        0.22073893, 0.38584593, 0.49873137, 0.5441156, 0.51585644, 0.41777843, 0.21256848,
        0.0017571375, -0.20929116, -0.39201394, -0.52167869, -0.58073699 },
}

-- ids = torch.tensor([[1, 3, 5, 7], [2, 4, 6, 9]])
-- tgt = torch.tensor([[0, 1, 2, 0], [2, 1, 0, 1]])
local function batch()
    return tide.tensor({ { 2, 4, 6, 8 }, { 3, 5, 7, 10 } }),
        tide.tensor({ { 1, 2, 3, 1 }, { 3, 2, 1, 2 } })
end

local function names_where(m, pred)
    local r = {}
    for n, p in m:named_parameters() do
        if pred(p) then r[#r + 1] = n end
    end
    return r
end

describe("ported microsoft/LoRA loralib", function()
    it("each layer's output in train mode, merge_AB's zero-padded delta", function()
        local m = new_model()
        local ids = batch()
        local x = m.emb(ids)
        assert_close_list(WANT.emb_train, values(x), 1e-5, "emb")
        assert_close_list(WANT.qkv_train, values(m.qkv(x)), 1e-5, "qkv")
        assert_close_list(WANT.merge_AB, values(m.qkv:merge_AB()), 1e-5, "merge_AB")
        assert.same({ 18, 6 }, { unpack(m.qkv:merge_AB().shape) })
        assert.same({ true, true, true, true, true, true, false, false, false, false, false, false,
            true, true, true, true, true, true }, m.qkv.lora_ind:tolist())
        assert_close_list(WANT.out_train, values(m(ids)), 1e-5, "out")
    end)

    it("eval() merges into weight.data, train() unmerges; outputs agree", function()
        local m = new_model()
        local ids = batch()
        local out_train = m(ids)
        local head_w = values(m.head.weight)
        m:eval()
        assert.is_true(m.emb.merged and m.qkv.merged and m.head.merged)
        assert.same({ 6, 3 }, { unpack(m.head.weight.shape) }) -- fan_in_fan_out: (in, out)
        assert_close_list(WANT.emb_w_merged, values(m.emb.weight), 1e-5, "emb.weight")
        assert_close_list(WANT.qkv_w_merged, values(m.qkv.weight), 1e-5, "qkv.weight")
        assert_close_list(WANT.head_w_merged, values(m.head.weight), 1e-5, "head.weight")
        assert_close_list(values(out_train), values(m(ids)), 1e-5, "out merged")
        m:train()
        assert.is_false(m.emb.merged or m.qkv.merged or m.head.merged)
        assert_close_list(WANT.head_w_unmerged, values(m.head.weight), 1e-5, "head unmerged")
        assert_close_list(head_w, values(m.head.weight), 1e-5, "head round trip")
    end)

    it("mark_only_lora_as_trainable and lora_state_dict for each bias option", function()
        local m = new_model()
        local lora = { "emb.lora_A", "emb.lora_B", "qkv.lora_A", "qkv.lora_B", "head.lora_A",
            "head.lora_B" }
        local with_bias = { "emb.lora_A", "emb.lora_B", "qkv.bias", "qkv.lora_A", "qkv.lora_B",
            "head.bias", "head.lora_A", "head.lora_B" }
        local want_trainable = { none = lora, all = with_bias, lora_only = with_bias }
        local want_keys = { none = lora, all = with_bias, lora_only = { "emb.lora_A", "emb.lora_B",
            "qkv.lora_A", "qkv.bias", "qkv.lora_B", "head.lora_A", "head.bias", "head.lora_B" } }
        for _, bias in ipairs({ "none", "all", "lora_only" }) do
            for _, p in ipairs(m:parameters()) do p.requires_grad = true end
            mark_only_lora_as_trainable(m, bias)
            assert.same(want_trainable[bias],
                names_where(m, function(p) return p.requires_grad end))
            local keys = {}
            for i, kv in ipairs(lora_state_dict(m, bias)) do
                keys[i] = kv[1]
                assert.is_true(tide.equal(kv[2], m:state_dict()[kv[1]]))
            end
            assert.same(want_keys[bias], keys)
        end
        assert.has_error(function() mark_only_lora_as_trainable(m, "some") end)
    end)

    it("2 Adam steps on the LoRA parameters only, then the merge agrees", function()
        local m = new_model()
        local ids, tgt = batch()
        mark_only_lora_as_trainable(m)
        local frozen = m.qkv.weight:clone()
        local params = {}
        for _, p in ipairs(m:parameters()) do
            if p.requires_grad then params[#params + 1] = p end
        end
        assert.equal(6, #params)
        local opt = optim.Adam(params, { lr = 0.05 })
        local losses = {}
        for step = 1, 2 do
            -- loss = F.cross_entropy(m(ids).view(-1, 3), tgt.view(-1))
            local loss = F.cross_entropy(m(ids):view(-1, 3), tgt:view(-1))
            opt:zero_grad()
            loss:backward()
            opt:step()
            losses[step] = loss:item()
        end
        losses[3] = F.cross_entropy(m(ids):view(-1, 3), tgt:view(-1)):item()
        assert_close_list({ WANT.losses[1], WANT.losses[2], WANT.loss_after }, losses, 1e-5, "loss")
        assert.is_true(tide.equal(frozen, m.qkv.weight))
        local o1 = m(ids)
        m:eval()
        local o2 = m(ids)
        assert_close_list(values(o1), values(o2), 1e-5, "merged after training")
        assert_close_list(WANT.out_eval2, values(o2), 1e-5, "out eval")
    end)

    it("Conv2d (ConvLoRA): shared parameters, merge on eval", function()
        local cv = Conv2d(2, 3, 3, { r = 2, padding = 1 })
        local names = {}
        tide.no_grad(function()
            local i = 0
            for n, p in cv:named_parameters() do
                names[#names + 1] = n
                p:copy_(fill(p.shape, 10 + i))
                i = i + 1
            end
        end)
        assert.same({ "weight", "bias", "lora_A", "lora_B" }, names)
        assert.is_false(cv.conv.weight.requires_grad)
        local xc = fill({ 1, 2, 4, 4 }, 20)
        assert_close_list(WANT.conv_train, values(cv(xc)), 1e-5, "conv train")
        cv:eval()
        assert_close_list(WANT.conv_train, values(cv(xc)), 1e-5, "conv eval")
        assert_close_list(WANT.conv_w_merged, values(cv.conv.weight), 1e-5, "conv merged")
    end)
end)
