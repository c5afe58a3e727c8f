-- ported_scripts101_spec.lua — chrischute/real-nvp: models/real_nvp/real_nvp.py (RealNVP with
-- its _pre_process: dequantisation, logit transform, softplus log-det; the recursive _RealNVP
-- scales), models/real_nvp/coupling_layer.py (CouplingLayer with MaskType.CHECKERBOARD and
-- CHANNEL_WISE, the weight_norm'ed Rescale, the s/t split, reverse), models/resnet/ (ResNet,
-- ResidualBlock), util/array_util.py (squeeze_2x2 with reverse and alt_order,
-- checkerboard_mask), util/norm_util.py (WNConv2d, get_param_groups),
-- models/real_nvp/real_nvp_loss.py (RealNVPLoss) and util/optim_util.py (bits_per_dim,
-- clip_grad_norm) with train.py's Adam step, ported line for line at tiny sizes (in_channels
-- 3, 8x8 images, mid_channels 4, num_blocks 1, num_scales 2). The Python line stands above
-- each Lua line that differs from it. Dims are 1-based; ModuleList children are "1".."n".
-- The values were computed with PyTorch 1.13 on the same weights (a formula over each
-- parameter's index in named_parameters order) and the same images and dequantisation noise.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local close = ported.close

-- Python's a // b (Lua 5.1 and LuaJIT have no //)
local function fdiv(a, b)
    return math.floor(a / b)
end

-- np.prod(x.size()[1:])
local function prod_tail(sizes)
    local n = 1
    for i = 2, #sizes do n = n * sizes[i] end
    return n
end

---------------------------------------------------------------------------------------------
-- util/array_util.py
---------------------------------------------------------------------------------------------
-- def squeeze_2x2(x, reverse=False, alt_order=False):
local function squeeze_2x2(x, reverse, alt_order)
    local block_size = 2 -- luacheck: ignore
    if alt_order then
        -- n, c, h, w = x.size()
        local _, c, h, w = unpack(x:size())
        if reverse then
            if c % 4 ~= 0 then
                error(string.format("Number of channels must be divisible by 4, got %d.", c))
            end
            -- c //= 4
            c = fdiv(c, 4)
        else
            if h % 2 ~= 0 then
                error(string.format("Height must be divisible by 2, got %d.", h))
            end
            if w % 2 ~= 0 then
                error(string.format("Width must be divisible by 4, got %d.", w))
            end
        end
        -- Defines permutation of input channels (shape is (4, 1, 2, 2)).
        local squeeze_matrix = tide.tensor({ { { { 1., 0. }, { 0., 0. } } },
                                             { { { 0., 0. }, { 0., 1. } } },
                                             { { { 0., 1. }, { 0., 0. } } },
                                             { { { 0., 0. }, { 1., 0. } } } },
                                           { dtype = x.dtype, device = x.device })
        -- perm_weight = torch.zeros((4 * c, c, 2, 2), dtype=x.dtype, device=x.device)
        local perm_weight = tide.zeros({ 4 * c, c, 2, 2 }, { dtype = x.dtype, device = x.device })
        -- for c_idx in range(c):
        for c_idx = 0, c - 1 do
            -- slice_0 = slice(c_idx * 4, (c_idx + 1) * 4)
            local slice_0 = { c_idx * 4 + 1, (c_idx + 1) * 4 }
            -- slice_1 = slice(c_idx, c_idx + 1)
            local slice_1 = { c_idx + 1, c_idx + 1 }
            -- perm_weight[slice_0, slice_1, :, :] = squeeze_matrix
            perm_weight[{ slice_0, slice_1, {}, {} }] = squeeze_matrix
        end
        -- shuffle_channels = torch.tensor([c_idx * 4 for c_idx in range(c)]
        --                                 + [c_idx * 4 + 1 for c_idx in range(c)] + ...)
        local list = {}
        for k = 0, 3 do
            for c_idx = 0, c - 1 do list[#list + 1] = c_idx * 4 + k + 1 end -- 1-based
        end
        local shuffle_channels = tide.tensor(list, { dtype = "int64" })
        -- perm_weight = perm_weight[shuffle_channels, :, :, :]
        perm_weight = perm_weight[{ shuffle_channels, {}, {}, {} }]

        if reverse then
            -- x = F.conv_transpose2d(x, perm_weight, stride=2)
            x = F.conv_transpose2d(x, perm_weight, nil, { stride = 2 })
        else
            -- x = F.conv2d(x, perm_weight, stride=2)
            x = F.conv2d(x, perm_weight, nil, { stride = 2 })
        end
    else
        -- b, c, h, w = x.size()
        local b, c, h, w = unpack(x:size())
        -- x = x.permute(0, 2, 3, 1)
        x = x:permute(1, 3, 4, 2)

        if reverse then
            if c % 4 ~= 0 then
                error(string.format("Number of channels %d is not divisible by 4", c))
            end
            -- x = x.view(b, h, w, c // 4, 2, 2)
            x = x:view(b, h, w, fdiv(c, 4), 2, 2)
            -- x = x.permute(0, 1, 4, 2, 5, 3)
            x = x:permute(1, 2, 5, 3, 6, 4)
            -- x = x.contiguous().view(b, 2 * h, 2 * w, c // 4)
            x = x:contiguous():view(b, 2 * h, 2 * w, fdiv(c, 4))
        else
            if h % 2 ~= 0 or w % 2 ~= 0 then
                error(string.format("Expected even spatial dims HxW, got %dx%d", h, w))
            end
            -- x = x.view(b, h // 2, 2, w // 2, 2, c)
            x = x:view(b, fdiv(h, 2), 2, fdiv(w, 2), 2, c)
            -- x = x.permute(0, 1, 3, 5, 2, 4)
            x = x:permute(1, 2, 4, 6, 3, 5)
            -- x = x.contiguous().view(b, h // 2, w // 2, c * 4)
            x = x:contiguous():view(b, fdiv(h, 2), fdiv(w, 2), c * 4)
        end

        -- x = x.permute(0, 3, 1, 2)
        x = x:permute(1, 4, 2, 3)
    end

    return x
end

-- def checkerboard_mask(height, width, reverse=False, dtype=torch.float32,
--                       device=None, requires_grad=False):
local function checkerboard_mask(height, width, reverse, opts)
    opts = opts or {}
    -- checkerboard = [[((i % 2) + j) % 2 for j in range(width)] for i in range(height)]
    local checkerboard = {}
    for i = 0, height - 1 do
        local row = {}
        for j = 0, width - 1 do row[j + 1] = ((i % 2) + j) % 2 end
        checkerboard[i + 1] = row
    end
    -- mask = torch.tensor(checkerboard, dtype=dtype, device=device, requires_grad=requires_grad)
    local mask = tide.tensor(checkerboard, { dtype = opts.dtype or "float32",
        device = opts.device, requires_grad = opts.requires_grad or false })

    if reverse then
        mask = 1 - mask
    end

    -- Reshape to (1, 1, height, width) for broadcasting with tensors of shape (B, C, H, W)
    mask = mask:view(1, 1, height, width)

    return mask
end

---------------------------------------------------------------------------------------------
-- util/norm_util.py, util/optim_util.py
---------------------------------------------------------------------------------------------
-- def get_param_groups(net, weight_decay, norm_suffix='weight_g', verbose=False):
local function get_param_groups(net, weight_decay, norm_suffix)
    norm_suffix = norm_suffix or "weight_g"
    local norm_params = {}
    local unnorm_params = {}
    -- for n, p in net.named_parameters():
    for _, np_ in ipairs(net:named_parameters()) do
        local n, p = np_[1], np_[2]
        -- if n.endswith(norm_suffix):
        if n:sub(-#norm_suffix) == norm_suffix then
            norm_params[#norm_params + 1] = p
        else
            unnorm_params[#unnorm_params + 1] = p
        end
    end

    -- param_groups = [{'name': 'normalized', 'params': norm_params, 'weight_decay': weight_decay},
    --                 {'name': 'unnormalized', 'params': unnorm_params}]
    local param_groups = {
        { name = "normalized", params = norm_params, weight_decay = weight_decay },
        { name = "unnormalized", params = unnorm_params } }

    return param_groups
end

-- class WNConv2d(nn.Module):
local WNConv2d = nn.Module:extend("WNConv2d")
-- def __init__(self, in_channels, out_channels, kernel_size, padding, bias=True):
function WNConv2d:init(in_channels, out_channels, kernel_size, padding, bias)
    if bias == nil then bias = true end
    -- self.conv = nn.utils.weight_norm(
    --     nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=bias))
    self.conv = nn.utils.weight_norm(
        nn.Conv2d(in_channels, out_channels, kernel_size, { padding = padding, bias = bias }))
end

function WNConv2d:forward(x)
    x = self.conv(x)

    return x
end

-- def bits_per_dim(x, nll):
local function bits_per_dim(x, nll)
    -- dim = np.prod(x.size()[1:])
    local dim = prod_tail(x:size())
    -- bpd = nll / (np.log(2) * dim)
    local bpd = nll / (math.log(2) * dim)

    return bpd
end

-- def clip_grad_norm(optimizer, max_norm, norm_type=2):
local function clip_grad_norm(optimizer, max_norm, norm_type)
    for _, group in ipairs(optimizer.param_groups) do
        -- utils.clip_grad_norm_(group['params'], max_norm, norm_type)
        nn.utils.clip_grad_norm_(group.params, max_norm, norm_type or 2)
    end
end

---------------------------------------------------------------------------------------------
-- models/resnet/
---------------------------------------------------------------------------------------------
-- class ResidualBlock(nn.Module):
local ResidualBlock = nn.Module:extend("ResidualBlock")
function ResidualBlock:init(in_channels, out_channels)
    self.in_norm = nn.BatchNorm2d(in_channels)
    -- self.in_conv = WNConv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False)
    self.in_conv = WNConv2d(in_channels, out_channels, 3, 1, false)

    self.out_norm = nn.BatchNorm2d(out_channels)
    -- self.out_conv = WNConv2d(out_channels, out_channels, kernel_size=3, padding=1, bias=True)
    self.out_conv = WNConv2d(out_channels, out_channels, 3, 1, true)
end

function ResidualBlock:forward(x)
    local skip = x

    x = self.in_norm(x)
    x = F.relu(x)
    x = self.in_conv(x)

    x = self.out_norm(x)
    x = F.relu(x)
    x = self.out_conv(x)

    x = x + skip

    return x
end

-- class ResNet(nn.Module):
local ResNet = nn.Module:extend("ResNet")
-- def __init__(self, in_channels, mid_channels, out_channels,
--              num_blocks, kernel_size, padding, double_after_norm):
function ResNet:init(in_channels, mid_channels, out_channels, num_blocks, kernel_size, padding,
                     double_after_norm)
    self.in_norm = nn.BatchNorm2d(in_channels)
    self.double_after_norm = double_after_norm
    self.in_conv = WNConv2d(2 * in_channels, mid_channels, kernel_size, padding, true)
    -- self.in_skip = WNConv2d(mid_channels, mid_channels, kernel_size=1, padding=0, bias=True)
    self.in_skip = WNConv2d(mid_channels, mid_channels, 1, 0, true)

    -- self.blocks = nn.ModuleList([ResidualBlock(mid_channels, mid_channels)
    --                              for _ in range(num_blocks)])
    local blocks, skips = {}, {}
    for i = 1, num_blocks do
        blocks[i] = ResidualBlock(mid_channels, mid_channels)
    end
    self.blocks = nn.ModuleList(blocks)
    -- self.skips = nn.ModuleList([WNConv2d(mid_channels, mid_channels, kernel_size=1,
    --                                      padding=0, bias=True) for _ in range(num_blocks)])
    for i = 1, num_blocks do
        skips[i] = WNConv2d(mid_channels, mid_channels, 1, 0, true)
    end
    self.skips = nn.ModuleList(skips)

    self.out_norm = nn.BatchNorm2d(mid_channels)
    -- self.out_conv = WNConv2d(mid_channels, out_channels, kernel_size=1, padding=0, bias=True)
    self.out_conv = WNConv2d(mid_channels, out_channels, 1, 0, true)
end

function ResNet:forward(x)
    x = self.in_norm(x)
    if self.double_after_norm then
        -- x *= 2.
        x:mul_(2.)
    end
    -- x = torch.cat((x, -x), dim=1)
    x = tide.cat({ x, -x }, { dim = 2 })
    x = F.relu(x)
    x = self.in_conv(x)
    local x_skip = self.in_skip(x)

    -- for block, skip in zip(self.blocks, self.skips):
    for i = 1, #self.blocks do
        local block, skip = self.blocks[i], self.skips[i]
        x = block(x)
        -- x_skip += skip(x)
        x_skip:add_(skip(x))
    end

    x = self.out_norm(x_skip)
    x = F.relu(x)
    x = self.out_conv(x)

    return x
end

---------------------------------------------------------------------------------------------
-- models/real_nvp/coupling_layer.py
---------------------------------------------------------------------------------------------
-- class MaskType(IntEnum):
local MaskType = { CHECKERBOARD = 0, CHANNEL_WISE = 1 }

-- class Rescale(nn.Module):
local Rescale = nn.Module:extend("Rescale")
function Rescale:init(num_channels)
    -- self.weight = nn.Parameter(torch.ones(num_channels, 1, 1))
    self.weight = nn.Parameter(tide.ones(num_channels, 1, 1))
end

function Rescale:forward(x)
    x = self.weight * x
    return x
end

-- class CouplingLayer(nn.Module):
local CouplingLayer = nn.Module:extend("CouplingLayer")
function CouplingLayer:init(in_channels, mid_channels, num_blocks, mask_type, reverse_mask)
    -- Save mask info
    self.mask_type = mask_type
    self.reverse_mask = reverse_mask

    -- Build scale and translate network
    if self.mask_type == MaskType.CHANNEL_WISE then
        -- in_channels //= 2
        in_channels = fdiv(in_channels, 2)
    end
    -- self.st_net = ResNet(in_channels, mid_channels, 2 * in_channels,
    --                      num_blocks=num_blocks, kernel_size=3, padding=1,
    --                      double_after_norm=(self.mask_type == MaskType.CHECKERBOARD))
    self.st_net = ResNet(in_channels, mid_channels, 2 * in_channels, num_blocks, 3, 1,
        self.mask_type == MaskType.CHECKERBOARD)

    -- Learnable scale for s
    self.rescale = nn.utils.weight_norm(Rescale(in_channels))
end

-- def forward(self, x, sldj=None, reverse=True):
function CouplingLayer:forward(x, sldj, reverse)
    if reverse == nil then reverse = true end
    if self.mask_type == MaskType.CHECKERBOARD then
        -- Checkerboard mask
        -- b = checkerboard_mask(x.size(2), x.size(3), self.reverse_mask, device=x.device)
        local b = checkerboard_mask(x:size(3), x:size(4), self.reverse_mask, { device = x.device })
        local x_b = x * b
        local st = self.st_net(x_b)
        -- s, t = st.chunk(2, dim=1)
        local s, t = unpack(st:chunk(2, 2))
        s = self.rescale(tide.tanh(s))
        s = s * (1 - b)
        t = t * (1 - b)

        -- Scale and translate
        if reverse then
            local inv_exp_s = s:mul(-1):exp()
            -- if torch.isnan(inv_exp_s).any():
            if tide.isnan(inv_exp_s):any():item() then
                error("Scale factor has NaN entries")
            end
            x = x * inv_exp_s - t
        else
            local exp_s = s:exp()
            if tide.isnan(exp_s):any():item() then
                error("Scale factor has NaN entries")
            end
            x = (x + t) * exp_s

            -- Add log-determinant of the Jacobian
            -- sldj += s.view(s.size(0), -1).sum(-1)
            sldj:add_(s:view(s:size(1), -1):sum(-1))
        end
    else
        -- Channel-wise mask
        local x_id, x_change
        if self.reverse_mask then
            -- x_id, x_change = x.chunk(2, dim=1)
            x_id, x_change = unpack(x:chunk(2, 2))
        else
            x_change, x_id = unpack(x:chunk(2, 2))
        end

        local st = self.st_net(x_id)
        local s, t = unpack(st:chunk(2, 2))
        s = self.rescale(tide.tanh(s))

        -- Scale and translate
        if reverse then
            local inv_exp_s = s:mul(-1):exp()
            if tide.isnan(inv_exp_s):any():item() then
                error("Scale factor has NaN entries")
            end
            x_change = x_change * inv_exp_s - t
        else
            local exp_s = s:exp()
            if tide.isnan(exp_s):any():item() then
                error("Scale factor has NaN entries")
            end
            x_change = (x_change + t) * exp_s

            -- Add log-determinant of the Jacobian
            -- sldj += s.view(s.size(0), -1).sum(-1)
            -- (PyTorch 1.13 raises here: its conv keeps the channels-last strides of the
            -- squeezed input, so s is not viewable; the reference ran s.reshape. tide's conv
            -- output is contiguous and the view works, as it did in the PyTorch 0.4 of the repo.)
            sldj:add_(s:view(s:size(1), -1):sum(-1))
        end

        if self.reverse_mask then
            -- x = torch.cat((x_id, x_change), dim=1)
            x = tide.cat({ x_id, x_change }, { dim = 2 })
        else
            x = tide.cat({ x_change, x_id }, { dim = 2 })
        end
    end

    return x, sldj
end

---------------------------------------------------------------------------------------------
-- models/real_nvp/real_nvp.py
---------------------------------------------------------------------------------------------
-- class _RealNVP(nn.Module):
local _RealNVP = nn.Module:extend("_RealNVP")
function _RealNVP:init(scale_idx, num_scales, in_channels, mid_channels, num_blocks)
    self.is_last_block = scale_idx == num_scales - 1

    local CB, CW = MaskType.CHECKERBOARD, MaskType.CHANNEL_WISE
    self.in_couplings = nn.ModuleList({
        CouplingLayer(in_channels, mid_channels, num_blocks, CB, false),
        CouplingLayer(in_channels, mid_channels, num_blocks, CB, true),
        CouplingLayer(in_channels, mid_channels, num_blocks, CB, false),
    })

    if self.is_last_block then
        self.in_couplings:append(
            CouplingLayer(in_channels, mid_channels, num_blocks, CB, true))
    else
        self.out_couplings = nn.ModuleList({
            CouplingLayer(4 * in_channels, 2 * mid_channels, num_blocks, CW, false),
            CouplingLayer(4 * in_channels, 2 * mid_channels, num_blocks, CW, true),
            CouplingLayer(4 * in_channels, 2 * mid_channels, num_blocks, CW, false),
        })
        self.next_block = _RealNVP(scale_idx + 1, num_scales, 2 * in_channels, 2 * mid_channels,
            num_blocks)
    end
end

-- def forward(self, x, sldj, reverse=False):
function _RealNVP:forward(x, sldj, reverse)
    reverse = reverse or false
    local x_split
    if reverse then
        if not self.is_last_block then
            -- Re-squeeze -> split -> next block
            x = squeeze_2x2(x, false, true)
            -- x, x_split = x.chunk(2, dim=1)
            x, x_split = unpack(x:chunk(2, 2))
            x, sldj = self.next_block(x, sldj, reverse)
            -- x = torch.cat((x, x_split), dim=1)
            x = tide.cat({ x, x_split }, { dim = 2 })
            x = squeeze_2x2(x, true, true)

            -- Squeeze -> 3x coupling (channel-wise)
            x = squeeze_2x2(x, false)
            -- for coupling in reversed(self.out_couplings):
            for i = #self.out_couplings, 1, -1 do
                x, sldj = self.out_couplings[i](x, sldj, reverse)
            end
            x = squeeze_2x2(x, true)
        end

        -- for coupling in reversed(self.in_couplings):
        for i = #self.in_couplings, 1, -1 do
            x, sldj = self.in_couplings[i](x, sldj, reverse)
        end
    else
        -- for coupling in self.in_couplings:
        for _, coupling in ipairs(self.in_couplings) do
            x, sldj = coupling(x, sldj, reverse)
        end

        if not self.is_last_block then
            -- Squeeze -> 3x coupling (channel-wise)
            x = squeeze_2x2(x, false)
            for _, coupling in ipairs(self.out_couplings) do
                x, sldj = coupling(x, sldj, reverse)
            end
            x = squeeze_2x2(x, true)

            -- Re-squeeze -> split -> next block
            x = squeeze_2x2(x, false, true)
            x, x_split = unpack(x:chunk(2, 2))
            x, sldj = self.next_block(x, sldj, reverse)
            x = tide.cat({ x, x_split }, { dim = 2 })
            x = squeeze_2x2(x, true, true)
        end
    end

    return x, sldj
end

-- class RealNVP(nn.Module):
local RealNVP = nn.Module:extend("RealNVP")
-- def __init__(self, num_scales=2, in_channels=3, mid_channels=64, num_blocks=8):
function RealNVP:init(num_scales, in_channels, mid_channels, num_blocks)
    -- Register data_constraint to pre-process images, not learnable
    -- self.register_buffer('data_constraint', torch.tensor([0.9], dtype=torch.float32))
    self:register_buffer("data_constraint", tide.tensor({ 0.9 }, { dtype = "float32" }))

    self.flows = _RealNVP(0, num_scales or 2, in_channels or 3, mid_channels or 64,
        num_blocks or 8)
end

-- def forward(self, x, reverse=False):
function RealNVP:forward(x, reverse)
    reverse = reverse or false
    local sldj = nil
    if not reverse then
        -- Expect inputs in [0, 1]
        -- if x.min() < 0 or x.max() > 1:
        if x:min():item() < 0 or x:max():item() > 1 then
            error(string.format("Expected x in [0, 1], got x with min/max %s/%s",
                x:min():item(), x:max():item()))
        end

        -- De-quantize and convert to logits
        x, sldj = self:_pre_process(x)
    end

    x, sldj = self.flows(x, sldj, reverse)

    return x, sldj
end

-- the check's fixed dequantisation noise stands in for torch.rand_like (the reference script
-- set torch.rand_like = lambda t: noise)
local function rand_like(x, noise)
    return noise or tide.rand_like(x)
end

function RealNVP:_pre_process(x)
    -- y = (x * 255. + torch.rand_like(x)) / 256.
    local y = (x * 255. + rand_like(x, self.noise)) / 256.
    y = (2 * y - 1) * self.data_constraint
    y = (y + 1) / 2
    -- y = y.log() - (1. - y).log()
    y = y:log() - (1. - y):log()

    -- Save log-determinant of Jacobian of initial transform
    -- ldj = F.softplus(y) + F.softplus(-y) \
    --     - F.softplus((1. - self.data_constraint).log() - self.data_constraint.log())
    local ldj = F.softplus(y) + F.softplus(-y)
        - F.softplus((1. - self.data_constraint):log() - self.data_constraint:log())
    -- sldj = ldj.view(ldj.size(0), -1).sum(-1)
    local sldj = ldj:view(ldj:size(1), -1):sum(-1)

    return y, sldj
end

---------------------------------------------------------------------------------------------
-- models/real_nvp/real_nvp_loss.py
---------------------------------------------------------------------------------------------
-- class RealNVPLoss(nn.Module):
local RealNVPLoss = nn.Module:extend("RealNVPLoss")
function RealNVPLoss:init(k)
    self.k = k or 256
end

function RealNVPLoss:forward(z, sldj)
    -- prior_ll = -0.5 * (z ** 2 + np.log(2 * np.pi))
    local prior_ll = -0.5 * (z ^ 2 + math.log(2 * math.pi))
    -- prior_ll = prior_ll.view(z.size(0), -1).sum(-1) \
    --     - np.log(self.k) * np.prod(z.size()[1:])
    prior_ll = prior_ll:view(z:size(1), -1):sum(-1)
        - math.log(self.k) * prod_tail(z:size())
    local ll = prior_ll + sldj
    -- nll = -ll.mean()
    local nll = -ll:mean()

    return nll
end

---------------------------------------------------------------------------------------------
-- the checks
---------------------------------------------------------------------------------------------
-- for i, (n, p) in enumerate(net.named_parameters()):
--     p.copy_((torch.sin(torch.arange(p.numel()) * 0.37 + i) * 0.2).reshape(p.shape))
local function det_init(model)
    tide.no_grad(function()
        for i, np_ in ipairs(model:named_parameters()) do
            local p = np_[2]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + (i - 1)) * 0.2):reshape(p.shape))
        end
    end)
end

-- x = torch.round((torch.sin(torch.arange(2*3*8*8) * 0.91) * 0.5 + 0.5) * 255)
--     .reshape(2,3,8,8) / 255
-- noise = (torch.cos(torch.arange(2*3*8*8) * 0.7) * 0.49 + 0.5).reshape(2,3,8,8)
local function images()
    local n = 2 * 3 * 8 * 8
    local x = tide.round((tide.sin(tide.arange(0, n) * 0.91) * 0.5 + 0.5) * 255)
        :reshape(2, 3, 8, 8) / 255
    local noise = (tide.cos(tide.arange(0, n) * 0.7) * 0.49 + 0.5):reshape(2, 3, 8, 8)
    return x, noise
end

local function build()
    -- net = RealNVP(num_scales=2, in_channels=3, mid_channels=4, num_blocks=1)
    local net = RealNVP(2, 3, 4, 1)
    det_init(net)
    local x, noise = images()
    net.noise = noise
    return net, x, noise
end

describe("ported chrischute/real-nvp (RealNVP)", function()
    it("squeeze_2x2 in both orders inverts itself and matches PyTorch's alt order", function()
        local t = tide.arange(0, 2 * 8 * 4 * 4):reshape(2, 8, 4, 4):float()
        local s = squeeze_2x2(t, false, true)
        assert.are.same({ 2, 32, 2, 2 }, s:size())
        -- s[0, :, 0, 0] and s[1, 5, 1] from PyTorch
        assert_close_list({ 0, 16, 32, 48, 64, 80, 96, 112, 5, 21, 37, 53, 69, 85, 101, 117,
            1, 17, 33, 49, 65, 81, 97, 113, 4, 20, 36, 52, 68, 84, 100, 116 },
            s[{ 1, {}, 1, 1 }]:totable(), 1e-6, "alt squeeze")
        assert_close_list({ 216, 218 }, s[{ 2, 6, 2 }]:totable(), 1e-6, "alt squeeze row")
        assert.is_true(tide.equal(squeeze_2x2(s, true, true), t))
        local q = squeeze_2x2(t, false)
        assert.are.same({ 2, 32, 2, 2 }, q:size())
        assert.is_true(tide.equal(squeeze_2x2(q, true), t))
        assert.are.same({ { { { 0, 1, 0 }, { 1, 0, 1 } } } },
            checkerboard_mask(2, 3):totable())
        assert.are.same({ { { { 1, 0, 1 }, { 0, 1, 0 } } } },
            checkerboard_mask(2, 3, true):totable())
    end)

    it("forward: z, sldj, loss and bits per dim match PyTorch 1.13", function()
        local net, x = build()
        -- 270 parameters: every conv's bias, weight_g, weight_v; Rescale's weight_g, weight_v
        assert.are.equal(270, #net:parameters())
        local loss_fn = RealNVPLoss()
        net:train()
        local z, sldj = net(x)
        assert.are.same({ 2, 3, 8, 8 }, z:size())
        assert.is_true(close(z:sum():item(), 14.29102897644043, 1e-3))
        assert.is_true(close(z:abs():sum():item(), 585.1459350585938, 1e-4))
        assert_close_list({ 0.12590977549552917, 1.6081314086914062, 2.5833606719970703,
            0.6272371411323547 }, z[{ 1, 1, 1, { 1, 4 } }]:totable(), 1e-4, "z[0,0,0,:4]")
        assert_close_list({ 0.7234362363815308, 2.473233222961426, 2.530071496963501,
            0.34250709414482117 }, z[{ 2, 3, 8, { 5, 8 } }]:totable(), 1e-4, "z[1,2,7,4:]")
        assert_close_list({ 370.91900634765625, 371.1461486816406 }, sldj:totable(), 1e-5,
            "sldj")
        local loss = loss_fn(z, sldj)
        assert.is_true(close(loss:item(), 1173.3248291015625, 1e-5))
        assert.is_true(close(bits_per_dim(x, loss):item(), 8.816405296325684, 1e-5))
        assert.has_error(function() net(x * 2) end)
    end)

    it("2 Adam steps on get_param_groups with clip_grad_norm: PyTorch's losses, falling; " ..
        "reverse(forward(x)) recovers x", function()
        local net, x, noise = build()
        local loss_fn = RealNVPLoss()
        net:train()
        -- param_groups = util.get_param_groups(net, args.weight_decay, norm_suffix='weight_g')
        local param_groups = get_param_groups(net, 5e-5, "weight_g")
        assert.are.equal(70, #param_groups[1].params)
        assert.are.equal(200, #param_groups[2].params)
        -- optimizer = optim.Adam(param_groups, lr=args.lr)
        local optimizer = optim.Adam(param_groups, { lr = 1e-3 })
        assert.are.equal(5e-5, optimizer.param_groups[1].weight_decay)
        assert.are.equal(0, optimizer.param_groups[2].weight_decay)
        local losses = {}
        for _ = 1, 2 do
            optimizer:zero_grad()
            -- z, sldj = net(x, reverse=False)
            local z, sldj = net(x, false)
            local loss = loss_fn(z, sldj)
            losses[#losses + 1] = loss:item()
            loss:backward()
            clip_grad_norm(optimizer, 100)
            optimizer:step()
        end
        tide.no_grad(function()
            local z, sldj = net(x)
            losses[#losses + 1] = loss_fn(z, sldj):item()
        end)
        for _, l in ipairs(losses) do assert_finite(l, "loss") end
        assert_close_list({ 1173.3248291015625, 1172.440185546875, 1171.580810546875 }, losses,
            1e-5, "losses")
        assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])

        -- sampling's net.eval(), then reverse
        net:eval()
        local z, sldj, y
        tide.no_grad(function()
            z, sldj = net(x)
            y = net(z, true)
        end)
        -- the biases in front of a BatchNorm get no gradient (the norm removes them), so Adam's
        -- steps on them are rounding noise, which differs from PyTorch's and reaches the
        -- eval-mode output through the running means: 1e-3 here, 1e-5 for the training losses
        assert.is_true(close(z:abs():sum():item(), 585.3880615234375, 1e-3))
        assert_close_list({ 0.09345979988574982, 1.6137725114822388, 2.5729753971099854,
            0.6353514194488525 }, z[{ 1, 1, 1, { 1, 4 } }]:totable(), 1e-3, "eval z[0,0,0,:4]")
        assert_close_list({ 370.75201416015625, 370.9653625488281 }, sldj:totable(), 1e-5,
            "eval sldj")
        assert.are.same({ 2, 3, 8, 8 }, y:size())
        assert_close_list({ 0.013922154903411865, 1.7714499235153198, 2.657510757446289,
            0.7546222805976868 }, y[{ 1, 1, 1, { 1, 4 } }]:totable(), 1e-4, "y[0,0,0,:4]")
        -- undo the logit and the dequantisation: the images come back
        local d = ((tide.sigmoid(y) * 2 - 1) / 0.9 + 1) / 2
        local xr = (d * 256 - noise) / 255
        assert.is_true((xr - x):abs():max():item() < 1e-4)
    end)
end)
