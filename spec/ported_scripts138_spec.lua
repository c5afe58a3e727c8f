-- ported_scripts138_spec.lua — dreamquark-ai/tabnet's pytorch_tabnet/sparsemax.py (_make_ix_like,
-- SparsemaxFunction, Sparsemax, Entmax15Function, Entmoid15, Entmax15, as
-- tide.autograd.Function) and pytorch_tabnet/tab_network.py (initialize_non_glu,
-- initialize_glu, GBN, GLU_Layer, GLU_Block, FeatTransformer, AttentiveTransformer,
-- TabNetEncoder, TabNetNoEmbeddings), ported line for line at tiny sizes with weights set by a
-- formula, checked against PyTorch 1.13's numbers (the same Python code and formulas run there).
-- The Python line stands above each Lua line that differs from it. Dims and gather indices
-- are 1-based: Python's dim=1 is dim = 2 here, and `gather(dim, support_size - 1)` is
-- `gather(dim, support_size)`.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local Function = tide.autograd.Function

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- 1. pytorch_tabnet/sparsemax.py
---------------------------------------------------------------------------------------------
-- def _make_ix_like(input, dim=0):
local function _make_ix_like(input, dim)
    dim = dim or 1
    local d = input:size(dim)
    -- rho = torch.arange(1, d + 1, device=input.device, dtype=input.dtype)
    local rho = tide.arange(1, d + 1, { device = input.device, dtype = input.dtype })
    -- view = [1] * input.dim()
    local view = {}
    for i = 1, input:dim() do view[i] = 1 end
    -- view[0] = -1
    view[1] = -1
    -- return rho.view(view).transpose(0, dim)
    return rho:view(view):transpose(1, dim)
end

-- class SparsemaxFunction(Function):
local SparsemaxFunction = Function:extend("SparsemaxFunction")

-- def _threshold_and_support(input, dim=-1):
function SparsemaxFunction._threshold_and_support(input, dim)
    dim = dim or -1
    -- input_srt, _ = torch.sort(input, descending=True, dim=dim)
    local input_srt = input:sort({ dim = dim, descending = true })
    local input_cumsum = input_srt:cumsum(dim) - 1
    local rhos = _make_ix_like(input, dim)
    -- support = rhos * input_srt > input_cumsum
    local support = (rhos * input_srt):gt(input_cumsum)

    -- support_size = support.sum(dim=dim).unsqueeze(dim)
    local support_size = support:sum({ dim = dim }):unsqueeze(dim)
    -- tau = input_cumsum.gather(dim, support_size - 1)
    local tau = input_cumsum:gather(dim, support_size)
    -- tau /= support_size.to(input.dtype)
    tau:div_(support_size:to(input.dtype))
    return tau, support_size
end

-- @staticmethod def forward(ctx, input, dim=-1):
function SparsemaxFunction.forward(ctx, input, dim)
    dim = dim or -1
    ctx.dim = dim
    -- max_val, _ = input.max(dim=dim, keepdim=True)
    local max_val = input:max({ dim = dim, keepdim = true })
    -- input -= max_val  # same numerical stability trick as for softmax
    input:sub_(max_val)
    local tau, supp_size = SparsemaxFunction._threshold_and_support(input, dim)
    -- output = torch.clamp(input - tau, min=0)
    local output = tide.clamp(input - tau, { min = 0 })
    ctx:save_for_backward(supp_size, output)
    return output
end

-- @staticmethod def backward(ctx, grad_output):
function SparsemaxFunction.backward(ctx, grad_output)
    -- supp_size, output = ctx.saved_tensors
    local supp_size, output = ctx.saved_tensors[1], ctx.saved_tensors[2]
    local dim = ctx.dim
    local grad_input = grad_output:clone()
    -- grad_input[output == 0] = 0
    grad_input[output:eq(0)] = 0

    -- v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze()
    local v_hat = grad_input:sum({ dim = dim }) / supp_size:to(output.dtype):squeeze()
    v_hat = v_hat:unsqueeze(dim)
    -- grad_input = torch.where(output != 0, grad_input - v_hat, grad_input)
    grad_input = tide.where(output:ne(0), grad_input - v_hat, grad_input)
    return grad_input, nil
end

local sparsemax = SparsemaxFunction.apply

-- class Sparsemax(nn.Module):
local Sparsemax = nn.Module:extend("Sparsemax")
function Sparsemax:init(dim)
    self.dim = dim or -1
end

function Sparsemax:forward(input)
    return sparsemax(input, self.dim)
end

-- class Entmax15Function(Function):
local Entmax15Function = Function:extend("Entmax15Function")

-- @staticmethod def _threshold_and_support(input, dim=-1):
function Entmax15Function._threshold_and_support(input, dim)
    dim = dim or -1
    -- Xsrt, _ = torch.sort(input, descending=True, dim=dim)
    local Xsrt = input:sort({ dim = dim, descending = true })

    local rho = _make_ix_like(input, dim)
    local mean = Xsrt:cumsum(dim) / rho
    -- mean_sq = (Xsrt ** 2).cumsum(dim) / rho
    local mean_sq = (Xsrt ^ 2):cumsum(dim) / rho
    -- ss = rho * (mean_sq - mean ** 2)
    local ss = rho * (mean_sq - mean ^ 2)
    local delta = (1 - ss) / rho

    -- delta_nz = torch.clamp(delta, 0)
    local delta_nz = tide.clamp(delta, 0)
    -- tau = mean - torch.sqrt(delta_nz)
    local tau = mean - tide.sqrt(delta_nz)

    -- support_size = (tau <= Xsrt).sum(dim).unsqueeze(dim)
    local support_size = tau:le(Xsrt):sum(dim):unsqueeze(dim)
    -- tau_star = tau.gather(dim, support_size - 1)
    local tau_star = tau:gather(dim, support_size)
    return tau_star, support_size
end

-- @staticmethod def forward(ctx, input, dim=-1):
function Entmax15Function.forward(ctx, input, dim)
    dim = dim or -1
    ctx.dim = dim

    -- max_val, _ = input.max(dim=dim, keepdim=True)
    local max_val = input:max({ dim = dim, keepdim = true })
    input = input - max_val -- same numerical stability trick as for softmax
    input = input / 2 -- divide by 2 to solve actual Entmax

    -- tau_star, _ = Entmax15Function._threshold_and_support(input, dim)
    local tau_star = Entmax15Function._threshold_and_support(input, dim)
    -- output = torch.clamp(input - tau_star, min=0) ** 2
    local output = tide.clamp(input - tau_star, { min = 0 }) ^ 2
    ctx:save_for_backward(output)
    return output
end

-- @staticmethod def backward(ctx, grad_output):
function Entmax15Function.backward(ctx, grad_output)
    -- Y, = ctx.saved_tensors
    local Y = ctx.saved_tensors[1]
    local gppr = Y:sqrt() -- = 1 / g'' (Y)
    local dX = grad_output * gppr
    -- q = dX.sum(ctx.dim) / gppr.sum(ctx.dim)
    local q = dX:sum(ctx.dim) / gppr:sum(ctx.dim)
    q = q:unsqueeze(ctx.dim)
    -- dX -= q * gppr
    dX:sub_(q * gppr)
    return dX, nil
end

-- class Entmoid15(Function):  """ A highly optimized equivalent of lambda x: Entmax15([x, 0]) """
local Entmoid15 = Function:extend("Entmoid15")

function Entmoid15._forward(input)
    -- input, is_pos = abs(input), input >= 0
    local is_pos = input:ge(0)
    input = input:abs()
    -- tau = (input + torch.sqrt(F.relu(8 - input ** 2))) / 2
    local tau = (input + tide.sqrt(F.relu(8 - input ^ 2))) / 2
    -- tau.masked_fill_(tau <= input, 2.0)
    tau:masked_fill_(tau:le(input), 2.0)
    -- y_neg = 0.25 * F.relu(tau - input, inplace=True) ** 2
    local y_neg = 0.25 * F.relu(tau - input, true) ^ 2
    return tide.where(is_pos, 1 - y_neg, y_neg)
end

function Entmoid15.forward(ctx, input)
    local output = Entmoid15._forward(input)
    ctx:save_for_backward(output)
    return output
end

function Entmoid15._backward(output, grad_output)
    -- gppr0, gppr1 = output.sqrt(), (1 - output).sqrt()
    local gppr0, gppr1 = output:sqrt(), (1 - output):sqrt()
    local grad_input = grad_output * gppr0
    local q = grad_input / (gppr0 + gppr1)
    -- grad_input -= q * gppr0
    grad_input:sub_(q * gppr0)
    return grad_input
end

function Entmoid15.backward(ctx, grad_output)
    -- return Entmoid15._backward(ctx.saved_tensors[0], grad_output)
    return Entmoid15._backward(ctx.saved_tensors[1], grad_output)
end

local entmax15 = Entmax15Function.apply
local entmoid15 = Entmoid15.apply

-- class Entmax15(nn.Module):
local Entmax15 = nn.Module:extend("Entmax15")
function Entmax15:init(dim)
    self.dim = dim or -1
end

function Entmax15:forward(input)
    return entmax15(input, self.dim)
end

---------------------------------------------------------------------------------------------
-- 2. pytorch_tabnet/tab_network.py
---------------------------------------------------------------------------------------------
-- def initialize_non_glu(module, input_dim, output_dim):
local function initialize_non_glu(module, input_dim, output_dim)
    -- gain_value = np.sqrt((input_dim + output_dim) / np.sqrt(4 * input_dim))
    local gain_value = math.sqrt((input_dim + output_dim) / math.sqrt(4 * input_dim))
    -- torch.nn.init.xavier_normal_(module.weight, gain=gain_value)
    nn.init.xavier_normal_(module.weight, { gain = gain_value })
end

-- def initialize_glu(module, input_dim, output_dim):
local function initialize_glu(module, input_dim, output_dim)
    -- gain_value = np.sqrt((input_dim + output_dim) / np.sqrt(input_dim))
    local gain_value = math.sqrt((input_dim + output_dim) / math.sqrt(input_dim))
    -- torch.nn.init.xavier_normal_(module.weight, gain=gain_value)
    nn.init.xavier_normal_(module.weight, { gain = gain_value })
end

-- class GBN(torch.nn.Module):  Ghost Batch Normalization, https://arxiv.org/abs/1705.08741
local GBN = nn.Module:extend("GBN")
-- def __init__(self, input_dim, virtual_batch_size=128, momentum=0.01):
function GBN:init(input_dim, virtual_batch_size, momentum)
    self.input_dim = input_dim
    self.virtual_batch_size = virtual_batch_size or 128
    -- self.bn = BatchNorm1d(self.input_dim, momentum=momentum)
    self.bn = nn.BatchNorm1d(self.input_dim, { momentum = momentum or 0.01 })
end

function GBN:forward(x)
    -- chunks = x.chunk(int(np.ceil(x.shape[0] / self.virtual_batch_size)), 0)
    local chunks = x:chunk(math.ceil(x.shape[1] / self.virtual_batch_size), 1)
    -- res = [self.bn(x_) for x_ in chunks]
    local res = {}
    for i, x_ in ipairs(chunks) do res[i] = self.bn(x_) end

    -- return torch.cat(res, dim=0)
    return tide.cat(res, 1)
end

-- class GLU_Layer(torch.nn.Module):
local GLU_Layer = nn.Module:extend("GLU_Layer")
-- def __init__(self, input_dim, output_dim, fc=None, virtual_batch_size=128, momentum=0.02):
function GLU_Layer:init(input_dim, output_dim, fc, virtual_batch_size, momentum)
    self.output_dim = output_dim
    if fc then
        self.fc = fc
    else
        -- self.fc = Linear(input_dim, 2 * output_dim, bias=False)
        self.fc = nn.Linear(input_dim, 2 * output_dim, { bias = false })
    end
    initialize_glu(self.fc, input_dim, 2 * output_dim)

    -- self.bn = GBN(2 * output_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)
    self.bn = GBN(2 * output_dim, virtual_batch_size or 128, momentum or 0.02)
end

function GLU_Layer:forward(x)
    x = self.fc(x)
    x = self.bn(x)
    -- out = torch.mul(x[:, : self.output_dim], torch.sigmoid(x[:, self.output_dim :]))
    local out = tide.mul(x[{ {}, { 1, self.output_dim } }],
        tide.sigmoid(x[{ {}, { self.output_dim + 1, -1 } }]))
    return out
end

-- class GLU_Block(torch.nn.Module):  Independent GLU block, specific to each step
local GLU_Block = nn.Module:extend("GLU_Block")
-- def __init__(self, input_dim, output_dim, n_glu=2, first=False, shared_layers=None,
--              virtual_batch_size=128, momentum=0.02):
function GLU_Block:init(input_dim, output_dim, opts)
    opts = opts or {}
    self.first = opts.first or false
    self.shared_layers = opts.shared_layers
    self.n_glu = opts.n_glu or 2
    self.glu_layers = nn.ModuleList()

    -- params = {"virtual_batch_size": virtual_batch_size, "momentum": momentum}
    local vbs, momentum = opts.virtual_batch_size or 128, opts.momentum or 0.02

    -- fc = shared_layers[0] if shared_layers else None
    local fc = self.shared_layers and self.shared_layers[1] or nil
    -- self.glu_layers.append(GLU_Layer(input_dim, output_dim, fc=fc, **params))
    self.glu_layers:append(GLU_Layer(input_dim, output_dim, fc, vbs, momentum))
    -- for glu_id in range(1, self.n_glu):
    for glu_id = 2, self.n_glu do
        -- fc = shared_layers[glu_id] if shared_layers else None
        fc = self.shared_layers and self.shared_layers[glu_id] or nil
        self.glu_layers:append(GLU_Layer(output_dim, output_dim, fc, vbs, momentum))
    end
end

function GLU_Block:forward(x)
    -- scale = torch.sqrt(torch.FloatTensor([0.5]).to(x.device))
    local scale = tide.sqrt(tide.tensor({ 0.5 }):to(x.device))
    -- layers_left = range(1, self.n_glu) / range(self.n_glu)
    local first_left
    if self.first then -- the first layer of the block has no scale multiplication
        -- x = self.glu_layers[0](x)
        x = self.glu_layers[1](x)
        first_left = 2
    else
        first_left = 1
    end

    -- for glu_id in layers_left:
    for glu_id = first_left, self.n_glu do
        x = tide.add(x, self.glu_layers[glu_id](x))
        x = x * scale
    end
    return x
end

-- class FeatTransformer(torch.nn.Module):
local FeatTransformer = nn.Module:extend("FeatTransformer")
-- def __init__(self, input_dim, output_dim, shared_layers, n_glu_independent,
--              virtual_batch_size=128, momentum=0.02):
function FeatTransformer:init(input_dim, output_dim, shared_layers, n_glu_independent,
                              virtual_batch_size, momentum)
    -- params = {"n_glu": n_glu_independent, "virtual_batch_size": ..., "momentum": momentum}
    local params = { n_glu = n_glu_independent, virtual_batch_size = virtual_batch_size,
        momentum = momentum }

    local is_first
    if shared_layers == nil then
        -- no shared layers
        self.shared = nn.Identity()
        is_first = true
    else
        -- self.shared = GLU_Block(input_dim, output_dim, first=True, shared_layers=...,
        --     n_glu=len(shared_layers), virtual_batch_size=..., momentum=momentum)
        self.shared = GLU_Block(input_dim, output_dim, { first = true,
            shared_layers = shared_layers, n_glu = #shared_layers,
            virtual_batch_size = virtual_batch_size, momentum = momentum })
        is_first = false
    end

    if n_glu_independent == 0 then
        -- no independent layers
        self.specifics = nn.Identity()
    else
        -- spec_input_dim = input_dim if is_first else output_dim
        local spec_input_dim = is_first and input_dim or output_dim
        -- self.specifics = GLU_Block(spec_input_dim, output_dim, first=is_first, **params)
        params.first = is_first
        self.specifics = GLU_Block(spec_input_dim, output_dim, params)
    end
end

function FeatTransformer:forward(x)
    x = self.shared(x)
    x = self.specifics(x)
    return x
end

-- class AttentiveTransformer(torch.nn.Module):
local AttentiveTransformer = nn.Module:extend("AttentiveTransformer")
-- def __init__(self, input_dim, group_dim, group_matrix, virtual_batch_size=128,
--              momentum=0.02, mask_type="sparsemax"):
function AttentiveTransformer:init(input_dim, group_dim, group_matrix, virtual_batch_size,
                                   momentum, mask_type)
    mask_type = mask_type or "sparsemax"
    -- self.fc = Linear(input_dim, group_dim, bias=False)
    self.fc = nn.Linear(input_dim, group_dim, { bias = false })
    initialize_non_glu(self.fc, input_dim, group_dim)
    -- self.bn = GBN(group_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)
    self.bn = GBN(group_dim, virtual_batch_size, momentum)

    if mask_type == "sparsemax" then
        -- self.selector = sparsemax.Sparsemax(dim=-1)
        self.selector = Sparsemax(-1)
    elseif mask_type == "entmax" then
        -- self.selector = sparsemax.Entmax15(dim=-1)
        self.selector = Entmax15(-1)
    else
        -- raise NotImplementedError(...)
        error("Please choose either sparsemax" .. "or entmax as masktype")
    end
end

function AttentiveTransformer:forward(priors, processed_feat)
    local x = self.fc(processed_feat)
    x = self.bn(x)
    x = tide.mul(x, priors)
    x = self.selector(x)
    return x
end

-- class TabNetEncoder(torch.nn.Module):
local TabNetEncoder = nn.Module:extend("TabNetEncoder")
-- def __init__(self, input_dim, output_dim, n_d=8, n_a=8, n_steps=3, gamma=1.3,
--     n_independent=2, n_shared=2, epsilon=1e-15, virtual_batch_size=128, momentum=0.02,
--     mask_type="sparsemax", group_attention_matrix=None):
function TabNetEncoder:init(input_dim, output_dim, o)
    o = o or {}
    local n_d, n_a = o.n_d or 8, o.n_a or 8
    local n_steps = o.n_steps or 3
    local momentum = o.momentum or 0.02
    local group_attention_matrix = o.group_attention_matrix
    self.input_dim = input_dim
    self.output_dim = output_dim
    -- self.is_multi_task = isinstance(output_dim, list)
    self.is_multi_task = type(output_dim) == "table"
    self.n_d = n_d
    self.n_a = n_a
    self.n_steps = n_steps
    self.gamma = o.gamma or 1.3
    self.epsilon = o.epsilon or 1e-15
    self.n_independent = o.n_independent or 2
    self.n_shared = o.n_shared or 2
    self.virtual_batch_size = o.virtual_batch_size or 128
    self.mask_type = o.mask_type or "sparsemax"
    -- self.initial_bn = BatchNorm1d(self.input_dim, momentum=0.01)
    self.initial_bn = nn.BatchNorm1d(self.input_dim, { momentum = 0.01 })
    self.group_attention_matrix = group_attention_matrix

    if self.group_attention_matrix == nil then
        -- no groups
        self.group_attention_matrix = tide.eye(self.input_dim)
        self.attention_dim = self.input_dim
    else
        self.attention_dim = self.group_attention_matrix.shape[1]
    end

    local shared_feat_transform
    if self.n_shared > 0 then
        shared_feat_transform = nn.ModuleList()
        -- for i in range(self.n_shared):
        for i = 1, self.n_shared do
            if i == 1 then
                shared_feat_transform:append(
                    -- Linear(self.input_dim, 2 * (n_d + n_a), bias=False)
                    nn.Linear(self.input_dim, 2 * (n_d + n_a), { bias = false })
                )
            else
                shared_feat_transform:append(
                    -- Linear(n_d + n_a, 2 * (n_d + n_a), bias=False)
                    nn.Linear(n_d + n_a, 2 * (n_d + n_a), { bias = false })
                )
            end
        end
    else
        shared_feat_transform = nil
    end

    -- self.initial_splitter = FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform,
    --     n_glu_independent=self.n_independent, virtual_batch_size=..., momentum=momentum)
    self.initial_splitter = FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform,
        self.n_independent, self.virtual_batch_size, momentum)

    self.feat_transformers = nn.ModuleList()
    self.att_transformers = nn.ModuleList()

    -- for step in range(n_steps):
    for _ = 1, n_steps do
        local transformer = FeatTransformer(self.input_dim, n_d + n_a, shared_feat_transform,
            self.n_independent, self.virtual_batch_size, momentum)
        -- attention = AttentiveTransformer(n_a, self.attention_dim,
        --     group_matrix=group_attention_matrix, virtual_batch_size=..., momentum=momentum,
        --     mask_type=self.mask_type)
        local attention = AttentiveTransformer(n_a, self.attention_dim, group_attention_matrix,
            self.virtual_batch_size, momentum, self.mask_type)
        self.feat_transformers:append(transformer)
        self.att_transformers:append(attention)
    end
end

-- def forward(self, x, prior=None):
function TabNetEncoder:forward(x, prior)
    x = self.initial_bn(x)

    -- bs = x.shape[0]  # batch size
    local bs = x.shape[1] -- batch size
    if prior == nil then
        -- prior = torch.ones((bs, self.attention_dim)).to(x.device)
        prior = tide.ones({ bs, self.attention_dim }):to(x.device)
    end

    local M_loss = 0
    -- att = self.initial_splitter(x)[:, self.n_d :]
    local att = self.initial_splitter(x)[{ {}, { self.n_d + 1, -1 } }]
    local steps_output = {}
    -- for step in range(self.n_steps):
    for step = 1, self.n_steps do
        local M = self.att_transformers[step](prior, att)
        -- M_loss += torch.mean(torch.sum(torch.mul(M, torch.log(M + self.epsilon)), dim=1))
        M_loss = M_loss + tide.mean(
            tide.sum(tide.mul(M, tide.log(M + self.epsilon)), { dim = 2 })
        )
        -- update prior
        prior = tide.mul(self.gamma - M, prior)
        -- output
        local M_feature_level = tide.matmul(M, self.group_attention_matrix)
        local masked_x = tide.mul(M_feature_level, x)
        local out = self.feat_transformers[step](masked_x)
        -- d = ReLU()(out[:, : self.n_d])
        local d = nn.ReLU()(out[{ {}, { 1, self.n_d } }])
        -- steps_output.append(d)
        steps_output[#steps_output + 1] = d
        -- update attention
        -- att = out[:, self.n_d :]
        att = out[{ {}, { self.n_d + 1, -1 } }]
    end

    -- M_loss /= self.n_steps
    M_loss = M_loss / self.n_steps
    return steps_output, M_loss
end

-- class TabNetNoEmbeddings(torch.nn.Module):
local TabNetNoEmbeddings = nn.Module:extend("TabNetNoEmbeddings")
-- def __init__(self, input_dim, output_dim, n_d=8, n_a=8, n_steps=3, gamma=1.3, ...):
function TabNetNoEmbeddings:init(input_dim, output_dim, o)
    o = o or {}
    self.input_dim = input_dim
    self.output_dim = output_dim
    -- self.is_multi_task = isinstance(output_dim, list)
    self.is_multi_task = type(output_dim) == "table"
    self.n_d = o.n_d or 8
    self.n_a = o.n_a or 8
    self.n_steps = o.n_steps or 3
    self.gamma = o.gamma or 1.3
    self.epsilon = o.epsilon or 1e-15
    self.n_independent = o.n_independent or 2
    self.n_shared = o.n_shared or 2
    self.virtual_batch_size = o.virtual_batch_size or 128
    self.mask_type = o.mask_type or "sparsemax"
    -- self.initial_bn = BatchNorm1d(self.input_dim, momentum=0.01)
    self.initial_bn = nn.BatchNorm1d(self.input_dim, { momentum = 0.01 })

    -- self.encoder = TabNetEncoder(input_dim=input_dim, output_dim=output_dim, n_d=n_d, ...)
    self.encoder = TabNetEncoder(input_dim, output_dim, o)

    if self.is_multi_task then
        self.multi_task_mappings = nn.ModuleList()
        -- for task_dim in output_dim:
        for _, task_dim in ipairs(output_dim) do
            -- task_mapping = Linear(n_d, task_dim, bias=False)
            local task_mapping = nn.Linear(self.n_d, task_dim, { bias = false })
            initialize_non_glu(task_mapping, self.n_d, task_dim)
            self.multi_task_mappings:append(task_mapping)
        end
    else
        -- self.final_mapping = Linear(n_d, output_dim, bias=False)
        self.final_mapping = nn.Linear(self.n_d, output_dim, { bias = false })
        initialize_non_glu(self.final_mapping, self.n_d, output_dim)
    end
end

function TabNetNoEmbeddings:forward(x)
    local out
    local steps_output, M_loss = self.encoder(x)
    -- res = torch.sum(torch.stack(steps_output, dim=0), dim=0)
    local res = tide.sum(tide.stack(steps_output, 1), { dim = 1 })

    if self.is_multi_task then
        -- Result will be in list format
        out = {}
        for _, task_mapping in ipairs(self.multi_task_mappings) do
            out[#out + 1] = task_mapping(res)
        end
    else
        out = self.final_mapping(res)
    end
    return out, M_loss
end

---------------------------------------------------------------------------------------------
-- 3. checks against PyTorch 1.13 (its numbers for the same code, inputs and weights)
---------------------------------------------------------------------------------------------
local function flat(t)
    return t:to("cpu"):double():reshape(-1):totable()
end

-- X[k] = 1.5 sin(0.9 k + 0.3) and W[k] = cos(0.7 k), shaped {2, 3, 4}, float64
local function x_and_w()
    local xs, ws = {}, {}
    for k = 0, 23 do
        xs[k + 1] = math.sin(0.9 * k + 0.3) * 1.5
        ws[k + 1] = math.cos(0.7 * k)
    end
    return tide.tensor(xs, { dtype = "float64" }):view(2, 3, 4),
        tide.tensor(ws, { dtype = "float64" }):view(2, 3, 4)
end

-- PyTorch's outputs and gradients of sum(fn(X, dim) * W); keys are PyTorch's dims 1 and 2
local SPARSE = {
    sparsemax = {
        [1] = {
            out = { 0.01814018, 0.5580801, 1, 0.372184, 0, 0, 0, 0.627816, 0.9818598,
                0.4419199, 0, 0, 0, 0, 0.0337624, 0.5802801, 1, 0.323329, 0, 0, 0, 0.676671,
                0.9662376, 0.4197199 },
            grad = { 0.1122171, -0.1175082, 0, -0.3456792, 0, 0, 0, 0.3456792, -0.1122171,
                0.1175082, 0, 0, 0, 0, 0.01126331, 0.2242979, 0, 0.6598274, 0, 0, 0,
                -0.6598274, -0.01126331, -0.2242979 },
        },
        [2] = {
            out = { 0, 0.5516223, 0.4483777, 0, 0, 0, 0, 1, 0.5625508, 0.4374492, 0, 0, 0,
                0, 0.03783405, 0.962166, 1, 0, 0, 0, 0, 0, 0.5843517, 0.4156483 },
            grad = { 0, 0.2974375, -0.2974375, 0, 0, 0, 0, 0, -0.1121464, 0.1121464, 0, 0, 0,
                0, -0.2274447, 0.2274447, 0, 0, 0, 0, 0, 0, -0.01441005, 0.01441005 },
        },
    },
    entmax15 = {
        [1] = {
            out = { 0.1796619, 0.5410342, 0.8604637, 0.4099491, 0, 0, 0, 0.5899602,
                0.8203381, 0.4589658, 0.1395363, 9.075609e-05, 0, 0.01548692, 0.1887517,
                0.556675, 1, 0.3692888, 0, 0, 0, 0.6152243, 0.8112483, 0.443325 },
            grad = { 0.06480304, -0.08288048, -0.1555051, -0.2426253, 0, 0, 0, 0.2399647,
                -0.06480304, 0.08288048, 0.1555051, 0.002660583, 0, -0.1131173, 0.0066022,
                0.1578349, 0, 0.5012408, 0, 0, 0, -0.3881235, -0.0066022, -0.1578349 },
        },
        [2] = {
            out = { 0.05338936, 0.5019022, 0.4314233, 0.01328515, 0.03550543, 0, 0.08482035,
                0.8796742, 0.5363855, 0.4486758, 0.01493877, 0, 0, 0, 0.1911429, 0.8088571,
                0.8601593, 0.1398407, 0, 0, 0, 0.07171293, 0.5215005, 0.4067866 },
            grad = { 0.1195045, 0.1998117, -0.2054787, -0.1138375, -0.1582157, 0, -0.1129124,
                0.2711281, -0.07090671, 0.08538784, -0.01448113, 0, 0, 0, -0.1338231,
                0.1338231, -0.1553862, 0.1553862, 0, 0, 0, 0.09080375, -0.05797872,
                -0.03282503 },
        },
    },
}

-- Python's named_parameters() of TabNetNoEmbeddings(6, 2, n_d=4, n_a=4, n_steps=2), with
-- ModuleList indices 1-based
local PARAM_NAMES = { "initial_bn.weight", "initial_bn.bias", "encoder.initial_bn.weight",
    "encoder.initial_bn.bias", "encoder.initial_splitter.shared.shared_layers.1.weight",
    "encoder.initial_splitter.shared.shared_layers.2.weight" }
-- each FeatTransformer: the shared block's batch norms (its fc are shared_layers), then the
-- specifics' GLU layers
local function append_block(prefix)
    local names = PARAM_NAMES
    for g = 1, 2 do
        for _, p in ipairs({ "weight", "bias" }) do
            names[#names + 1] = prefix .. ".shared.glu_layers." .. g .. ".bn.bn." .. p
        end
    end
    for g = 1, 2 do
        names[#names + 1] = prefix .. ".specifics.glu_layers." .. g .. ".fc.weight"
        for _, p in ipairs({ "weight", "bias" }) do
            names[#names + 1] = prefix .. ".specifics.glu_layers." .. g .. ".bn.bn." .. p
        end
    end
end
append_block("encoder.initial_splitter")
append_block("encoder.feat_transformers.1")
append_block("encoder.feat_transformers.2")
for s = 1, 2 do
    for _, p in ipairs({ "fc.weight", "bn.bn.weight", "bn.bn.bias" }) do
        PARAM_NAMES[#PARAM_NAMES + 1] = "encoder.att_transformers." .. s .. "." .. p
    end
end
PARAM_NAMES[#PARAM_NAMES + 1] = "final_mapping.weight"

-- the weights by formula, as ref.py's fill(): a seed from the name, sin(0.1 seed + 0.73 k)
local function seed(name)
    local s = 0
    for i = 1, #name do s = s + name:byte(i) * i end
    return s % 997
end

local function fill(model)
    local names = {}
    tide.no_grad(function()
        for name, p in model:named_parameters() do
            names[#names + 1] = name
            local s, v = seed(name), {}
            for k = 0, p:numel() - 1 do
                local a = math.sin(s * 0.1 + k * 0.73)
                if p:dim() == 2 then
                    v[k + 1] = 0.6 * a
                elseif name:match("weight$") then
                    v[k + 1] = 1 + 0.1 * a
                else
                    v[k + 1] = 0.1 * a
                end
            end
            p:copy_(tide.tensor(v, { dtype = "float64" }):view(p.shape):to(p.dtype))
        end
    end)
    return names
end

local function batch()
    local xs, ys = {}, {}
    for i = 0, 7 do
        local row = {}
        for j = 0, 5 do row[j + 1] = math.sin(0.9 * i + 1.7 * j) * 2 + 0.1 * j end
        xs[i + 1] = row
        ys[i + 1] = i % 2 + 1
    end
    return tide.tensor(xs), tide.tensor(ys, { dtype = "int64" })
end

local NET = {
    sparsemax = {
        steps1 = { 0.3253267, 0.2452176, 0.6132508, 0.5253704, 0.03963028, 0.3699304,
            0.1676556, 0, 0, 0, 0.1364985, 0.2287992, 0, 0, 0, 0, 0.09205198, 1.033124,
            0.5517138, 0, 0, 0, 0.2185353, 0.3905305, 0, 0, 0, 0, 0.0444699, 0.06006166,
            0.1319421, 0.2313617 },
        steps2 = { 0, 0, 0, 0.3078434, 0, 0, 0, 0, 0, 0, 0, 0.3128722, 0, 0.05948246, 0, 0, 0,
            0, 0, 0, 0.009703806, 0.1495755, 0.04893644, 0, 0, 0.1706679, 0.07839894, 0, 0, 0,
            0.01305903, 0 },
        M_loss = -0.71551585,
        out = { -0.8157928, 0.8639625, -0.3086434, 0.2835696, -0.2407565, 0.3022684,
            -0.03267092, 0.0287149, -0.9049605, 0.8395393, -0.3545638, 0.392306, -0.1384536,
            0.1292202, -0.1963093, 0.2153206 },
        losses = { 0.94836503, 0.93839806 },
    },
    entmax = {
        steps1 = { 0.05678569, 0, 0.5033806, 0.4246443, 0.1585958, 0.6839133, 0.5374303, 0, 0,
            0, 0, 0.1048671, 0, 0, 0, 0, 0.05511647, 0.6742374, 0.8673181, 0.01652789, 0, 0,
            0, 0, 0, 0, 0, 0, 0, 0, 0.04264796, 0.2044808 },
        steps2 = { 0, 0, 0.05288095, 0.1955382, 0.0700822, 0.2157046, 0.03284464, 0, 0, 0, 0,
            0.4136617, 0, 0, 0, 0, 0.01113896, 0, 0.387285, 0, 0.1396183, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0 },
        M_loss = -0.83851182,
        out = { -0.5178715, 0.5919384, -0.876134, 0.8028615, -0.1559463, 0.2113015, 0, 0,
            -1.107291, 1.089738, -0.03465909, 0.01704987, 0, 0, -0.08582083, 0.1088017 },
        losses = { 0.92618573, 0.84804344 },
    },
}

describe("ported scripts 138: TabNet's sparsemax.py and tab_network.py", function()
    for _, name in ipairs({ "sparsemax", "entmax15" }) do
        for _, pydim in ipairs({ 1, 2 }) do
            it(name .. " over PyTorch's dim " .. pydim .. ": output and gradient", function()
                local fn = name == "sparsemax" and sparsemax or entmax15
                local X, W = x_and_w()
                -- x = X.clone().requires_grad_(True); y = fn(x, d); (y * W).sum().backward()
                local x = X:clone():requires_grad_(true)
                local y = fn(x, pydim + 1)
                assert.are.equal(name == "sparsemax" and "SparsemaxFunctionBackward"
                    or "Entmax15FunctionBackward", tostring(y.grad_fn))
                ;(y * W):sum():backward()
                local want = SPARSE[name][pydim]
                assert_close_list(want.out, flat(y), 1e-6, name .. " out")
                assert_close_list(want.grad, flat(x.grad), 1e-6, name .. " grad")
                -- each slice along dim sums to 1
                local ones = pydim == 1 and { 1, 1, 1, 1, 1, 1, 1, 1 } or { 1, 1, 1, 1, 1, 1 }
                assert_close_list(ones, flat(y:sum(pydim + 1)), 1e-12, name .. " sums")
            end)
        end
    end

    it("the modules Sparsemax(dim=-1) and Entmax15(dim=-1) on the last dim", function()
        local X = x_and_w()
        assert_close_list(SPARSE.sparsemax[2].out, flat(Sparsemax(-1)(X:clone())), 1e-6,
            "Sparsemax")
        -- dim -1 of {2, 3, 4} is PyTorch's dim 2
        assert_close_list(SPARSE.entmax15[2].out, flat(Entmax15()(X:clone())), 1e-6,
            "Entmax15")
        -- _make_ix_like(input, dim) puts 1..d along dim
        assert.are.same({ 1, 3, 1 }, _make_ix_like(X, 2):size())
        assert_close_list({ 1, 2, 3 }, flat(_make_ix_like(X, 2)), 0, "rho")
    end)

    it("entmoid15, Entmax15([x, 0]): output and gradient", function()
        local x = tide.tensor({ -3.0, -1.2, -0.3, 0.0, 0.4, 1.1, 2.5 }, { dtype = "float64" })
            :requires_grad_(true)
        local y = entmoid15(x)
        ;(y * tide.arange(1, 8, { dtype = "float64" })):sum():backward()
        assert_close_list({ 0, 0.1158125, 0.3945323, 0.5, 0.64, 0.8582924, 1 }, flat(y), 1e-6,
            "entmoid15")
        assert_close_list({ 0, 0.499756, 1.042677, 1.414214, 1.714286, 1.606056, 0 },
            flat(x.grad), 1e-6, "entmoid15 grad")
    end)

    for _, mask_type in ipairs({ "sparsemax", "entmax" }) do
        it("TabNetNoEmbeddings (" .. mask_type .. "): encoder steps, M_loss, 2 Adam steps",
            function()
                tide.manual_seed(0)
                local m = TabNetNoEmbeddings(6, 2, { n_d = 4, n_a = 4, n_steps = 2,
                    virtual_batch_size = 4, mask_type = mask_type })
                assert.are.same(PARAM_NAMES, fill(m))
                local want = NET[mask_type]
                local xb, yb = batch()
                -- steps, M_loss = m.encoder(xb)
                local steps, M_loss = m.encoder(xb)
                assert.are.same({ 8, 4 }, { steps[1]:size(1), steps[1]:size(2) })
                assert_close_list(want.steps1, flat(steps[1]), 2e-5, "steps[1]")
                assert_close_list(want.steps2, flat(steps[2]), 2e-5, "steps[2]")
                assert_close_list({ want.M_loss }, { M_loss:item() }, 2e-5, "M_loss")

                -- opt = torch.optim.Adam(m.parameters(), lr=0.005)
                local opt = tide.optim.Adam(m:parameters(), { lr = 0.005 })
                fill(m)
                local lambda_sparse = 1e-3
                local losses = {}
                for step = 1, 2 do
                    opt:zero_grad()
                    local out, ml = m(xb)
                    -- loss = F.cross_entropy(out, yb) + lambda_sparse * M_loss
                    local loss = F.cross_entropy(out, yb) + lambda_sparse * ml
                    loss:backward()
                    opt:step()
                    losses[step] = loss:item()
                    assert_finite(losses[step], "loss")
                    if step == 1 then
                        assert_close_list(want.out, flat(out), 2e-5, "out")
                    end
                end
                assert_close_list(want.losses, losses, 2e-5, "losses")
                assert.is_true(losses[2] < losses[1])
            end)
    end
end)
