-- ported_scripts98_spec.lua — pclucas14/pixel-cnn-pp (PixelCNN++): utils.py (concat_elu,
-- log_sum_exp, log_prob_from_logits, discretized_mix_logistic_loss and its _1d form, to_one_hot,
-- sample_from_discretized_mix_logistic, down_shift, right_shift), layers.py (nin,
-- down_shifted_conv2d, down_shifted_deconv2d, down_right_shifted_conv2d,
-- down_right_shifted_deconv2d, gated_resnet) and model.py (PixelCNNLayer_up, PixelCNNLayer_down,
-- PixelCNN), ported line for line at tiny sizes (nr_resnet 1, nr_filters 8, nr_logistic_mix 2,
-- 8x8 RGB images in [-1, 1]), checked against PyTorch 1.13 for the same weights, then 2 Adam
-- steps. The Python line stands above each Lua line that differs from it. Dims are 1-based:
-- Python's `axis = len(x.size()) - 1` (0-based) is `x:dim()` here.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local close = ported.close
local assert_close_list = ported.assert_close_list

-- from torch.nn.utils import weight_norm as wn
local wn = nn.utils.weight_norm

---------------------------------------------------------------------------------------------
-- utils.py
---------------------------------------------------------------------------------------------
-- def concat_elu(x):
local function concat_elu(x)
    -- axis = len(x.size()) - 3
    local axis = x:dim() - 2
    -- return F.elu(torch.cat([x, -x], dim=axis))
    return F.elu(tide.cat({ x, -x }, axis))
end

-- def log_sum_exp(x):
local function log_sum_exp(x)
    -- axis  = len(x.size()) - 1
    local axis = x:dim()
    -- m, _  = torch.max(x, dim=axis)
    local m = x:max(axis)
    -- m2, _ = torch.max(x, dim=axis, keepdim=True)
    local m2 = x:max(axis, true)
    -- return m + torch.log(torch.sum(torch.exp(x - m2), dim=axis))
    return m + tide.log(tide.sum(tide.exp(x - m2), axis))
end

-- def log_prob_from_logits(x):
local function log_prob_from_logits(x)
    -- axis = len(x.size()) - 1
    local axis = x:dim()
    -- m, _ = torch.max(x, dim=axis, keepdim=True)
    local m = x:max(axis, true)
    -- return x - m - torch.log(torch.sum(torch.exp(x - m), dim=axis, keepdim=True))
    return x - m - tide.log(tide.sum(tide.exp(x - m), axis, true))
end

-- the branch selection shared by both losses (the Python repeats it in each function)
-- inner_inner_cond = (cdf_delta > 1e-5).float()
-- inner_inner_out  = inner_inner_cond * torch.log(torch.clamp(cdf_delta, min=1e-12))
--                    + (1. - inner_inner_cond) * (log_pdf_mid - np.log(127.5))
-- inner_cond       = (x > 0.999).float()
-- inner_out        = inner_cond * log_one_minus_cdf_min + (1. - inner_cond) * inner_inner_out
-- cond             = (x < -0.999).float()
-- log_probs        = cond * log_cdf_plus + (1. - cond) * inner_out
local function select_log_probs(x, cdf_delta, log_pdf_mid, log_cdf_plus, log_one_minus_cdf_min)
    local inner_inner_cond = cdf_delta:gt(1e-5):float()
    local inner_inner_out = inner_inner_cond * tide.log(tide.clamp(cdf_delta, { min = 1e-12 }))
        + (1. - inner_inner_cond) * (log_pdf_mid - math.log(127.5))
    local inner_cond = x:gt(0.999):float()
    local inner_out = inner_cond * log_one_minus_cdf_min + (1. - inner_cond) * inner_inner_out
    local cond = x:lt(-0.999):float()
    return cond * log_cdf_plus + (1. - cond) * inner_out
end

-- def discretized_mix_logistic_loss(x, l):
local function discretized_mix_logistic_loss(x, l)
    -- x = x.permute(0, 2, 3, 1)
    x = x:permute(1, 3, 4, 2)
    -- l = l.permute(0, 2, 3, 1)
    l = l:permute(1, 3, 4, 2)
    -- xs = [int(y) for y in x.size()]
    local xs = x:size()
    -- ls = [int(y) for y in l.size()]
    local ls = l:size()

    -- nr_mix = int(ls[-1] / 10)
    local nr_mix = math.floor(ls[-1] / 10)
    -- logit_probs = l[:, :, :, :nr_mix]
    local logit_probs = l[{ {}, {}, {}, { 1, nr_mix } }]
    -- l = l[:, :, :, nr_mix:].contiguous().view(xs + [nr_mix * 3]) # 3 for mean, scale, coef
    l = l[{ {}, {}, {}, { nr_mix + 1, -1 } }]:contiguous():view(xs + { nr_mix * 3 })
    -- means = l[:, :, :, :, :nr_mix]
    local means = l[{ {}, {}, {}, {}, { 1, nr_mix } }]
    -- log_scales = torch.clamp(l[:, :, :, :, nr_mix:2 * nr_mix], min=-7.)
    local log_scales = tide.clamp(l[{ {}, {}, {}, {}, { nr_mix + 1, 2 * nr_mix } }], { min = -7. })

    -- coeffs = F.tanh(l[:, :, :, :, 2 * nr_mix:3 * nr_mix])
    local coeffs = F.tanh(l[{ {}, {}, {}, {}, { 2 * nr_mix + 1, 3 * nr_mix } }])
    x = x:contiguous()
    -- x = x.unsqueeze(-1) + Variable(torch.zeros(xs + [nr_mix]).cuda(), requires_grad=False)
    x = x:unsqueeze(-1) + tide.zeros(xs + { nr_mix }, { device = x.device })
    -- m2 = (means[:, :, :, 1, :] + coeffs[:, :, :, 0, :]
    --             * x[:, :, :, 0, :]).view(xs[0], xs[1], xs[2], 1, nr_mix)
    local m2 = (means[{ {}, {}, {}, 2 }] + coeffs[{ {}, {}, {}, 1 }]
        * x[{ {}, {}, {}, 1 }]):view(xs[1], xs[2], xs[3], 1, nr_mix)

    -- m3 = (means[:, :, :, 2, :] + coeffs[:, :, :, 1, :] * x[:, :, :, 0, :] +
    --             coeffs[:, :, :, 2, :] * x[:, :, :, 1, :]).view(xs[0], xs[1], xs[2], 1, nr_mix)
    local m3 = (means[{ {}, {}, {}, 3 }] + coeffs[{ {}, {}, {}, 2 }] * x[{ {}, {}, {}, 1 }] +
        coeffs[{ {}, {}, {}, 3 }] * x[{ {}, {}, {}, 2 }]):view(xs[1], xs[2], xs[3], 1, nr_mix)

    -- means = torch.cat((means[:, :, :, 0, :].unsqueeze(3), m2, m3), dim=3)
    means = tide.cat({ means[{ {}, {}, {}, 1 }]:unsqueeze(4), m2, m3 }, 4)
    local centered_x = x - means
    local inv_stdv = tide.exp(-log_scales)
    -- plus_in = inv_stdv * (centered_x + 1. / 255.)
    local plus_in = inv_stdv * (centered_x + 1. / 255.)
    local cdf_plus = F.sigmoid(plus_in)
    local min_in = inv_stdv * (centered_x - 1. / 255.)
    local cdf_min = F.sigmoid(min_in)
    -- log probability for edge case of 0 (before scaling)
    local log_cdf_plus = plus_in - F.softplus(plus_in)
    -- log probability for edge case of 255 (before scaling)
    local log_one_minus_cdf_min = -F.softplus(min_in)
    local cdf_delta = cdf_plus - cdf_min -- probability for all other cases
    local mid_in = inv_stdv * centered_x
    -- log_pdf_mid = mid_in - log_scales - 2. * F.softplus(mid_in)
    local log_pdf_mid = mid_in - log_scales - 2. * F.softplus(mid_in)

    local log_probs = select_log_probs(x, cdf_delta, log_pdf_mid, log_cdf_plus,
        log_one_minus_cdf_min)
    -- log_probs        = torch.sum(log_probs, dim=3) + log_prob_from_logits(logit_probs)
    log_probs = tide.sum(log_probs, 4) + log_prob_from_logits(logit_probs)

    -- return -torch.sum(log_sum_exp(log_probs))
    return -tide.sum(log_sum_exp(log_probs))
end

-- def discretized_mix_logistic_loss_1d(x, l):
local function discretized_mix_logistic_loss_1d(x, l)
    x = x:permute(1, 3, 4, 2)
    l = l:permute(1, 3, 4, 2)
    local xs = x:size()
    local ls = l:size()
    -- nr_mix = int(ls[-1] / 3)
    local nr_mix = math.floor(ls[-1] / 3)
    local logit_probs = l[{ {}, {}, {}, { 1, nr_mix } }]
    -- l = l[:, :, :, nr_mix:].contiguous().view(xs + [nr_mix * 2]) # 2 for mean, scale
    l = l[{ {}, {}, {}, { nr_mix + 1, -1 } }]:contiguous():view(xs + { nr_mix * 2 })
    local means = l[{ {}, {}, {}, {}, { 1, nr_mix } }]
    local log_scales = tide.clamp(l[{ {}, {}, {}, {}, { nr_mix + 1, 2 * nr_mix } }], { min = -7. })
    x = x:contiguous()
    x = x:unsqueeze(-1) + tide.zeros(xs + { nr_mix }, { device = x.device })
    local centered_x = x - means
    local inv_stdv = tide.exp(-log_scales)
    local plus_in = inv_stdv * (centered_x + 1. / 255.)
    local cdf_plus = F.sigmoid(plus_in)
    local min_in = inv_stdv * (centered_x - 1. / 255.)
    local cdf_min = F.sigmoid(min_in)
    local log_cdf_plus = plus_in - F.softplus(plus_in)
    local log_one_minus_cdf_min = -F.softplus(min_in)
    local cdf_delta = cdf_plus - cdf_min
    local mid_in = inv_stdv * centered_x
    local log_pdf_mid = mid_in - log_scales - 2. * F.softplus(mid_in)
    local log_probs = select_log_probs(x, cdf_delta, log_pdf_mid, log_cdf_plus,
        log_one_minus_cdf_min)
    log_probs = tide.sum(log_probs, 4) + log_prob_from_logits(logit_probs)
    return -tide.sum(log_sum_exp(log_probs))
end

-- def to_one_hot(tensor, n, fill_with=1.):
local function to_one_hot(tensor, n, fill_with)
    fill_with = fill_with or 1.
    -- one_hot = torch.FloatTensor(tensor.size() + (n,)).zero_()
    -- if tensor.is_cuda : one_hot = one_hot.cuda()
    local one_hot = tide.zeros(tensor:size() + { n }, { device = tensor.device })
    -- one_hot.scatter_(len(tensor.size()), tensor.unsqueeze(-1), fill_with)
    one_hot:scatter_(tensor:dim() + 1, tensor:unsqueeze(-1), fill_with)
    return one_hot
end

-- def sample_from_discretized_mix_logistic(l, nr_mix):
-- noise: the spec's fixed uniform draws {temp =, u =} in place of the two uniform_ fills
local function sample_from_discretized_mix_logistic(l, nr_mix, noise)
    l = l:permute(1, 3, 4, 2)
    local ls = l:size()
    -- xs = ls[:-1] + [3]
    local xs = ls[{ { 1, -2 } }] + { 3 }

    local logit_probs = l[{ {}, {}, {}, { 1, nr_mix } }]
    -- l = l[:, :, :, nr_mix:].contiguous().view(xs + [nr_mix * 3])
    l = l[{ {}, {}, {}, { nr_mix + 1, -1 } }]:contiguous():view(xs + { nr_mix * 3 })
    -- temp = torch.FloatTensor(logit_probs.size())
    -- if l.is_cuda : temp = temp.cuda()
    local temp = tide.empty(logit_probs:size(), { device = l.device })
    -- temp.uniform_(1e-5, 1. - 1e-5)
    temp:uniform_(1e-5, 1. - 1e-5)
    if noise then temp = noise.temp end
    -- temp = logit_probs.data - torch.log(- torch.log(temp))
    temp = logit_probs:detach() - tide.log(-tide.log(temp))
    -- _, argmax = temp.max(dim=3)
    local _, argmax = temp:max(4)

    local one_hot = to_one_hot(argmax, nr_mix)
    -- sel = one_hot.view(xs[:-1] + [1, nr_mix])
    local sel = one_hot:view(xs[{ { 1, -2 } }] + { 1, nr_mix })
    -- means = torch.sum(l[:, :, :, :, :nr_mix] * sel, dim=4)
    local means = tide.sum(l[{ {}, {}, {}, {}, { 1, nr_mix } }] * sel, 5)
    -- log_scales = torch.clamp(torch.sum(
    --     l[:, :, :, :, nr_mix:2 * nr_mix] * sel, dim=4), min=-7.)
    local log_scales = tide.clamp(tide.sum(
        l[{ {}, {}, {}, {}, { nr_mix + 1, 2 * nr_mix } }] * sel, 5), { min = -7. })
    -- coeffs = torch.sum(F.tanh(
    --     l[:, :, :, :, 2 * nr_mix:3 * nr_mix]) * sel, dim=4)
    local coeffs = tide.sum(F.tanh(
        l[{ {}, {}, {}, {}, { 2 * nr_mix + 1, 3 * nr_mix } }]) * sel, 5)
    -- u = torch.FloatTensor(means.size())
    local u = tide.empty(means:size(), { device = l.device })
    u:uniform_(1e-5, 1. - 1e-5)
    if noise then u = noise.u end
    -- x = means + torch.exp(log_scales) * (torch.log(u) - torch.log(1. - u))
    local x = means + tide.exp(log_scales) * (tide.log(u) - tide.log(1. - u))
    -- x0 = torch.clamp(torch.clamp(x[:, :, :, 0], min=-1.), max=1.)
    local x0 = tide.clamp(tide.clamp(x[{ {}, {}, {}, 1 }], { min = -1. }), { max = 1. })
    -- x1 = torch.clamp(torch.clamp(
    --    x[:, :, :, 1] + coeffs[:, :, :, 0] * x0, min=-1.), max=1.)
    local x1 = tide.clamp(tide.clamp(
        x[{ {}, {}, {}, 2 }] + coeffs[{ {}, {}, {}, 1 }] * x0, { min = -1. }), { max = 1. })
    -- x2 = torch.clamp(torch.clamp(
    --    x[:, :, :, 2] + coeffs[:, :, :, 1] * x0 + coeffs[:, :, :, 2] * x1, min=-1.), max=1.)
    local x2 = tide.clamp(tide.clamp(
        x[{ {}, {}, {}, 3 }] + coeffs[{ {}, {}, {}, 2 }] * x0 + coeffs[{ {}, {}, {}, 3 }] * x1,
        { min = -1. }), { max = 1. })

    -- out = torch.cat([x0.view(xs[:-1] + [1]), x1.view(xs[:-1] + [1]),
    --                  x2.view(xs[:-1] + [1])], dim=3)
    local head = xs[{ { 1, -2 } }] + { 1 }
    local out = tide.cat({ x0:view(head), x1:view(head), x2:view(head) }, 4)
    -- put back in Pytorch ordering
    -- out = out.permute(0, 3, 1, 2)
    out = out:permute(1, 4, 2, 3)
    return out, argmax
end

-- def down_shift(x, pad=None):
local function down_shift(x, pad)
    -- xs = [int(y) for y in x.size()]
    local xs = x:size()
    -- when downshifting, the last row is removed
    -- x = x[:, :, :xs[2] - 1, :]
    x = x[{ {}, {}, { 1, xs[3] - 1 }, {} }]
    -- padding left, padding right, padding top, padding bottom
    -- pad = nn.ZeroPad2d((0, 0, 1, 0)) if pad is None else pad
    pad = pad or nn.ZeroPad2d({ 0, 0, 1, 0 })
    return pad(x)
end

-- def right_shift(x, pad=None):
local function right_shift(x, pad)
    local xs = x:size()
    -- when righshifting, the last column is removed
    -- x = x[:, :, :, :xs[3] - 1]
    x = x[{ {}, {}, {}, { 1, xs[4] - 1 } }]
    -- pad = nn.ZeroPad2d((1, 0, 0, 0)) if pad is None else pad
    pad = pad or nn.ZeroPad2d({ 1, 0, 0, 0 })
    return pad(x)
end

---------------------------------------------------------------------------------------------
-- layers.py
---------------------------------------------------------------------------------------------
-- class nin(nn.Module):
local nin = nn.Module:extend("nin")
function nin:init(dim_in, dim_out)
    -- self.lin_a = wn(nn.Linear(dim_in, dim_out))
    self.lin_a = wn(nn.Linear(dim_in, dim_out))
    self.dim_out = dim_out
end

function nin:forward(x)
    -- x = x.permute(0, 2, 3, 1)
    x = x:permute(1, 3, 4, 2)
    -- shp = [int(y) for y in x.size()]
    local shp = x:size()
    -- out = self.lin_a(x.contiguous().view(shp[0]*shp[1]*shp[2], shp[3]))
    local out = self.lin_a(x:contiguous():view(shp[1] * shp[2] * shp[3], shp[4]))
    -- shp[-1] = self.dim_out
    shp[4] = self.dim_out
    out = out:view(shp)
    -- return out.permute(0, 3, 1, 2)
    return out:permute(1, 4, 2, 3)
end

-- class down_shifted_conv2d(nn.Module):
local down_shifted_conv2d = nn.Module:extend("down_shifted_conv2d")
-- def __init__(self, num_filters_in, num_filters_out, filter_size=(2,3), stride=(1,1),
--                 shift_output_down=False, norm='weight_norm'):
function down_shifted_conv2d:init(num_filters_in, num_filters_out, opts)
    opts = opts or {}
    local filter_size, stride = opts.filter_size or { 2, 3 }, opts.stride or { 1, 1 }
    local shift_output_down, norm = opts.shift_output_down or false, opts.norm or "weight_norm"
    -- assert norm in [None, 'batch_norm', 'weight_norm']  (None is "none" here: nil is the default)
    assert(norm == "none" or norm == "batch_norm" or norm == "weight_norm")
    -- self.conv = nn.Conv2d(num_filters_in, num_filters_out, filter_size, stride)
    self.conv = nn.Conv2d(num_filters_in, num_filters_out, filter_size, stride)
    self.shift_output_down = shift_output_down
    self.norm = norm
    -- self.pad  = nn.ZeroPad2d((int((filter_size[1] - 1) / 2), # pad left
    --                           int((filter_size[1] - 1) / 2), # pad right
    --                           filter_size[0] - 1,            # pad top
    --                           0) )                           # pad down
    local half = math.floor((filter_size[2] - 1) / 2)
    self.pad = nn.ZeroPad2d({ half, half, filter_size[1] - 1, 0 })

    if norm == "weight_norm" then
        self.conv = wn(self.conv)
    elseif norm == "batch_norm" then
        self.bn = nn.BatchNorm2d(num_filters_out)
    end

    if shift_output_down then
        -- self.down_shift = lambda x : down_shift(x, pad=nn.ZeroPad2d((0, 0, 1, 0)))
        self.down_shift = function(x) return down_shift(x, nn.ZeroPad2d({ 0, 0, 1, 0 })) end
    end
end

function down_shifted_conv2d:forward(x)
    x = self.pad(x)
    x = self.conv(x)
    -- x = self.bn(x) if self.norm == 'batch_norm' else x
    x = self.norm == "batch_norm" and self.bn(x) or x
    -- return self.down_shift(x) if self.shift_output_down else x
    return self.shift_output_down and self.down_shift(x) or x
end

-- class down_shifted_deconv2d(nn.Module):
local down_shifted_deconv2d = nn.Module:extend("down_shifted_deconv2d")
function down_shifted_deconv2d:init(num_filters_in, num_filters_out, opts)
    opts = opts or {}
    local filter_size, stride = opts.filter_size or { 2, 3 }, opts.stride or { 1, 1 }
    -- self.deconv = wn(nn.ConvTranspose2d(num_filters_in, num_filters_out, filter_size, stride,
    --                                     output_padding=1))
    self.deconv = wn(nn.ConvTranspose2d(num_filters_in, num_filters_out, filter_size,
        { stride = stride, output_padding = 1 }))
    self.filter_size = filter_size
    self.stride = stride
end

function down_shifted_deconv2d:forward(x)
    x = self.deconv(x)
    local xs = x:size()
    -- return x[:, :, :(xs[2] - self.filter_size[0] + 1),
    --          int((self.filter_size[1] - 1) / 2):(xs[3] - int((self.filter_size[1] - 1) / 2))]
    local side = math.floor((self.filter_size[2] - 1) / 2)
    return x[{ {}, {}, { 1, xs[3] - self.filter_size[1] + 1 }, { side + 1, xs[4] - side } }]
end

-- class down_right_shifted_conv2d(nn.Module):
local down_right_shifted_conv2d = nn.Module:extend("down_right_shifted_conv2d")
-- def __init__(self, num_filters_in, num_filters_out, filter_size=(2,2), stride=(1,1),
--                 shift_output_right=False, norm='weight_norm'):
function down_right_shifted_conv2d:init(num_filters_in, num_filters_out, opts)
    opts = opts or {}
    local filter_size, stride = opts.filter_size or { 2, 2 }, opts.stride or { 1, 1 }
    local shift_output_right, norm = opts.shift_output_right or false, opts.norm or "weight_norm"
    assert(norm == "none" or norm == "batch_norm" or norm == "weight_norm")
    -- self.pad = nn.ZeroPad2d((filter_size[1] - 1, 0, filter_size[0] - 1, 0))
    self.pad = nn.ZeroPad2d({ filter_size[2] - 1, 0, filter_size[1] - 1, 0 })
    -- self.conv = nn.Conv2d(num_filters_in, num_filters_out, filter_size, stride=stride)
    self.conv = nn.Conv2d(num_filters_in, num_filters_out, filter_size, { stride = stride })
    self.shift_output_right = shift_output_right
    self.norm = norm

    if norm == "weight_norm" then
        self.conv = wn(self.conv)
    elseif norm == "batch_norm" then
        self.bn = nn.BatchNorm2d(num_filters_out)
    end

    if shift_output_right then
        -- self.right_shift = lambda x : right_shift(x, pad=nn.ZeroPad2d((1, 0, 0, 0)))
        self.right_shift = function(x) return right_shift(x, nn.ZeroPad2d({ 1, 0, 0, 0 })) end
    end
end

function down_right_shifted_conv2d:forward(x)
    x = self.pad(x)
    x = self.conv(x)
    x = self.norm == "batch_norm" and self.bn(x) or x
    -- return self.right_shift(x) if self.shift_output_right else x
    return self.shift_output_right and self.right_shift(x) or x
end

-- class down_right_shifted_deconv2d(nn.Module):
local down_right_shifted_deconv2d = nn.Module:extend("down_right_shifted_deconv2d")
function down_right_shifted_deconv2d:init(num_filters_in, num_filters_out, opts)
    opts = opts or {}
    local filter_size, stride = opts.filter_size or { 2, 2 }, opts.stride or { 1, 1 }
    -- self.deconv = wn(nn.ConvTranspose2d(num_filters_in, num_filters_out, filter_size,
    --                                         stride, output_padding=1))
    self.deconv = wn(nn.ConvTranspose2d(num_filters_in, num_filters_out, filter_size,
        { stride = stride, output_padding = 1 }))
    self.filter_size = filter_size
    self.stride = stride
end

function down_right_shifted_deconv2d:forward(x)
    x = self.deconv(x)
    local xs = x:size()
    -- x = x[:, :, :(xs[2] - self.filter_size[0] + 1):, :(xs[3] - self.filter_size[1] + 1)]
    x = x[{ {}, {}, { 1, xs[3] - self.filter_size[1] + 1 },
        { 1, xs[4] - self.filter_size[2] + 1 } }]
    return x
end

-- class gated_resnet(nn.Module):
local gated_resnet = nn.Module:extend("gated_resnet")
-- def __init__(self, num_filters, conv_op, nonlinearity=concat_elu, skip_connection=0):
function gated_resnet:init(num_filters, conv_op, nonlinearity, skip_connection)
    skip_connection = skip_connection or 0
    self.skip_connection = skip_connection
    self.nonlinearity = nonlinearity or concat_elu
    self.conv_input = conv_op(2 * num_filters, num_filters) -- cuz of concat elu

    if skip_connection ~= 0 then
        self.nin_skip = nin(2 * skip_connection * num_filters, num_filters)
    end

    self.dropout = nn.Dropout2d(0.5)
    self.conv_out = conv_op(2 * num_filters, 2 * num_filters)
end

-- def forward(self, og_x, a=None):
function gated_resnet:forward(og_x, a)
    local x = self.conv_input(self.nonlinearity(og_x))
    if a ~= nil then
        -- x += self.nin_skip(self.nonlinearity(a))
        x:add_(self.nin_skip(self.nonlinearity(a)))
    end
    x = self.nonlinearity(x)
    x = self.dropout(x)
    x = self.conv_out(x)
    -- a, b = torch.chunk(x, 2, dim=1)
    local b
    a, b = unpack(tide.chunk(x, 2, 2))
    -- c3 = a * F.sigmoid(b)
    local c3 = a * F.sigmoid(b)
    return og_x + c3
end

---------------------------------------------------------------------------------------------
-- model.py
---------------------------------------------------------------------------------------------
-- class PixelCNNLayer_up(nn.Module):
local PixelCNNLayer_up = nn.Module:extend("PixelCNNLayer_up")
function PixelCNNLayer_up:init(nr_resnet, nr_filters, resnet_nonlinearity)
    self.nr_resnet = nr_resnet
    -- stream from pixels above
    -- self.u_stream = nn.ModuleList([gated_resnet(nr_filters, down_shifted_conv2d,
    --                                 resnet_nonlinearity, skip_connection=0)
    --                                     for _ in range(nr_resnet)])
    local u, ul = {}, {}
    for i = 1, nr_resnet do
        u[i] = gated_resnet(nr_filters, down_shifted_conv2d, resnet_nonlinearity, 0)
    end
    self.u_stream = nn.ModuleList(u)
    -- stream from pixels above and to thes left
    for i = 1, nr_resnet do
        ul[i] = gated_resnet(nr_filters, down_right_shifted_conv2d, resnet_nonlinearity, 1)
    end
    self.ul_stream = nn.ModuleList(ul)
end

function PixelCNNLayer_up:forward(u, ul)
    local u_list, ul_list = {}, {}
    -- for i in range(self.nr_resnet):
    for i = 1, self.nr_resnet do
        u = self.u_stream[i](u)
        -- ul = self.ul_stream[i](ul, a=u)
        ul = self.ul_stream[i](ul, u)
        -- u_list  += [u]
        u_list[#u_list + 1] = u
        ul_list[#ul_list + 1] = ul
    end
    return u_list, ul_list
end

-- class PixelCNNLayer_down(nn.Module):
local PixelCNNLayer_down = nn.Module:extend("PixelCNNLayer_down")
function PixelCNNLayer_down:init(nr_resnet, nr_filters, resnet_nonlinearity)
    self.nr_resnet = nr_resnet
    local u, ul = {}, {}
    for i = 1, nr_resnet do
        u[i] = gated_resnet(nr_filters, down_shifted_conv2d, resnet_nonlinearity, 1)
    end
    self.u_stream = nn.ModuleList(u)
    for i = 1, nr_resnet do
        ul[i] = gated_resnet(nr_filters, down_right_shifted_conv2d, resnet_nonlinearity, 2)
    end
    self.ul_stream = nn.ModuleList(ul)
end

function PixelCNNLayer_down:forward(u, ul, u_list, ul_list)
    for i = 1, self.nr_resnet do
        -- u  = self.u_stream[i](u, a=u_list.pop())
        u = self.u_stream[i](u, table.remove(u_list))
        -- ul = self.ul_stream[i](ul, a=torch.cat((u, ul_list.pop()), 1))
        ul = self.ul_stream[i](ul, tide.cat({ u, table.remove(ul_list) }, 2))
    end
    return u, ul
end

-- class PixelCNN(nn.Module):
local PixelCNN = nn.Module:extend("PixelCNN")
-- def __init__(self, nr_resnet=5, nr_filters=80, nr_logistic_mix=10,
--                 resnet_nonlinearity='concat_elu', input_channels=3):
function PixelCNN:init(opts)
    opts = opts or {}
    local nr_resnet, nr_filters = opts.nr_resnet or 5, opts.nr_filters or 80
    local nr_logistic_mix = opts.nr_logistic_mix or 10
    local resnet_nonlinearity = opts.resnet_nonlinearity or "concat_elu"
    local input_channels = opts.input_channels or 3
    if resnet_nonlinearity == "concat_elu" then
        -- self.resnet_nonlinearity = lambda x : concat_elu(x)
        self.resnet_nonlinearity = function(x) return concat_elu(x) end
    else
        error("right now only concat elu is supported as resnet nonlinearity.")
    end

    self.nr_filters = nr_filters
    self.input_channels = input_channels
    self.nr_logistic_mix = nr_logistic_mix
    self.right_shift_pad = nn.ZeroPad2d({ 1, 0, 0, 0 })
    self.down_shift_pad = nn.ZeroPad2d({ 0, 0, 1, 0 })

    -- down_nr_resnet = [nr_resnet] + [nr_resnet + 1] * 2
    local down_nr_resnet = { nr_resnet, nr_resnet + 1, nr_resnet + 1 }
    local down, up = {}, {}
    for i = 1, 3 do
        down[i] = PixelCNNLayer_down(down_nr_resnet[i], nr_filters, self.resnet_nonlinearity)
    end
    self.down_layers = nn.ModuleList(down)
    for i = 1, 3 do
        up[i] = PixelCNNLayer_up(nr_resnet, nr_filters, self.resnet_nonlinearity)
    end
    self.up_layers = nn.ModuleList(up)

    -- self.downsize_u_stream  = nn.ModuleList([down_shifted_conv2d(nr_filters, nr_filters,
    --                                             stride=(2,2)) for _ in range(2)])
    local s22 = { stride = { 2, 2 } }
    self.downsize_u_stream = nn.ModuleList({ down_shifted_conv2d(nr_filters, nr_filters, s22),
        down_shifted_conv2d(nr_filters, nr_filters, s22) })
    self.downsize_ul_stream = nn.ModuleList({
        down_right_shifted_conv2d(nr_filters, nr_filters, s22),
        down_right_shifted_conv2d(nr_filters, nr_filters, s22) })
    self.upsize_u_stream = nn.ModuleList({ down_shifted_deconv2d(nr_filters, nr_filters, s22),
        down_shifted_deconv2d(nr_filters, nr_filters, s22) })
    self.upsize_ul_stream = nn.ModuleList({
        down_right_shifted_deconv2d(nr_filters, nr_filters, s22),
        down_right_shifted_deconv2d(nr_filters, nr_filters, s22) })

    -- self.u_init = down_shifted_conv2d(input_channels + 1, nr_filters, filter_size=(2,3),
    --                 shift_output_down=True)
    self.u_init = down_shifted_conv2d(input_channels + 1, nr_filters,
        { filter_size = { 2, 3 }, shift_output_down = true })

    -- self.ul_init = nn.ModuleList([down_shifted_conv2d(input_channels + 1, nr_filters,
    --                                     filter_size=(1,3), shift_output_down=True),
    --                                down_right_shifted_conv2d(input_channels + 1, nr_filters,
    --                                     filter_size=(2,1), shift_output_right=True)])
    self.ul_init = nn.ModuleList({ down_shifted_conv2d(input_channels + 1, nr_filters,
            { filter_size = { 1, 3 }, shift_output_down = true }),
        down_right_shifted_conv2d(input_channels + 1, nr_filters,
            { filter_size = { 2, 1 }, shift_output_right = true }) })

    -- num_mix = 3 if self.input_channels == 1 else 10
    local num_mix = self.input_channels == 1 and 3 or 10
    self.nin_out = nin(nr_filters, num_mix * nr_logistic_mix)
    -- self.init_padding = None
    self.init_padding = nil
end

-- def forward(self, x, sample=False):
function PixelCNN:forward(x, sample)
    -- similar as done in the tf repo :
    -- if self.init_padding is None and not sample:
    local xs
    if self.init_padding == nil and not sample then
        xs = x:size()
        -- padding = Variable(torch.ones(xs[0], 1, xs[2], xs[3]), requires_grad=False)
        local padding = tide.ones(xs[1], 1, xs[3], xs[4])
        -- self.init_padding = padding.cuda() if x.is_cuda else padding
        self.init_padding = padding:to(x.device)
    end

    if sample then
        xs = x:size()
        local padding = tide.ones(xs[1], 1, xs[3], xs[4])
        padding = padding:to(x.device)
        -- x = torch.cat((x, padding), 1)
        x = tide.cat({ x, padding }, 2)
    end

    --##      UP PASS    ###
    -- x = x if sample else torch.cat((x, self.init_padding), 1)
    x = sample and x or tide.cat({ x, self.init_padding }, 2)
    -- u_list  = [self.u_init(x)]
    local u_list = { self.u_init(x) }
    -- ul_list = [self.ul_init[0](x) + self.ul_init[1](x)]
    local ul_list = { self.ul_init[1](x) + self.ul_init[2](x) }
    for i = 1, 3 do
        -- resnet block
        -- u_out, ul_out = self.up_layers[i](u_list[-1], ul_list[-1])
        local u_out, ul_out = self.up_layers[i](u_list[#u_list], ul_list[#ul_list])
        -- u_list  += u_out
        for _, t in ipairs(u_out) do u_list[#u_list + 1] = t end
        for _, t in ipairs(ul_out) do ul_list[#ul_list + 1] = t end

        -- if i != 2:
        if i ~= 3 then
            -- downscale (only twice)
            -- u_list  += [self.downsize_u_stream[i](u_list[-1])]
            u_list[#u_list + 1] = self.downsize_u_stream[i](u_list[#u_list])
            ul_list[#ul_list + 1] = self.downsize_ul_stream[i](ul_list[#ul_list])
        end
    end

    --##    DOWN PASS    ###
    -- u  = u_list.pop()
    local u = table.remove(u_list)
    local ul = table.remove(ul_list)

    for i = 1, 3 do
        -- resnet block
        u, ul = self.down_layers[i](u, ul, u_list, ul_list)

        -- upscale (only twice)
        if i ~= 3 then
            u = self.upsize_u_stream[i](u)
            ul = self.upsize_ul_stream[i](ul)
        end
    end

    local x_out = self.nin_out(F.elu(ul))

    -- assert len(u_list) == len(ul_list) == 0, pdb.set_trace()
    assert(#u_list == 0 and #ul_list == 0)

    return x_out
end

---------------------------------------------------------------------------------------------
-- the checks: PyTorch 1.13 ran the same code (/tmp script) with the same formulas
---------------------------------------------------------------------------------------------
-- parameter k (1-based, named_parameters order), element j (0-based, flat):
-- scale * sin(0.61 j + 1.7 k) + 0.05, made in double and stored as float32 (PyTorch's order)
local function fill(t, k, scale)
    local v = {}
    for j = 0, t:numel() - 1 do
        v[j + 1] = scale * math.sin(0.61 * j + 1.7 * k) + 0.05
    end
    tide.no_grad(function()
        t:copy_(tide.tensor(v):view(t:size()))
    end)
end

-- pixel values 0..255 (every one: 37 is prime to 256) scaled to [-1, 1]
local function images(B, C, H, W)
    local v = {}
    for j = 0, B * C * H * W - 1 do
        v[j + 1] = ((37 * j + 11) % 256) / 127.5 - 1
    end
    return tide.tensor(v):view(B, C, H, W)
end

local function noise(shape, off)
    local n, v = 1, {}
    for _, s in ipairs(shape) do n = n * s end
    for j = 0, n - 1 do
        v[j + 1] = 0.02 + 0.96 * ((0.618034 * (j + off)) % 1)
    end
    return tide.tensor(v):view(shape)
end

local function head(t, n)
    local flat, r = t:detach():reshape(-1), {}
    for i = 1, n do r[i] = flat[i]:item() end
    return r
end

describe("ported pixel-cnn-pp (PixelCNN++)", function()
    local x = images(2, 3, 8, 8)

    it("down_shift and right_shift move the image by a row and a column", function()
        local d, r = down_shift(x), right_shift(x)
        assert.are.same({ 2, 3, 8, 8 }, d.shape)
        assert.are.same({ 2, 3, 8, 8 }, r.shape)
        -- PyTorch: down_shift(x).sum() 1.1294112, right_shift(x).sum() -0.94117665
        assert.is_true(close(d:sum():item(), 1.1294112, 1e-5))
        assert.is_true(close(r:sum():item(), -0.94117665, 1e-5))
        assert.are.equal(0, d[{ {}, {}, 1 }]:abs():sum():item())
        assert.are.equal(0, r[{ {}, {}, {}, 1 }]:abs():sum():item())
        assert.is_true(tide.equal(d[{ {}, {}, { 2, 8 } }], x[{ {}, {}, { 1, 7 } }]))
        assert.is_true(tide.equal(r[{ {}, {}, {}, { 2, 8 } }], x[{ {}, {}, {}, { 1, 7 } }]))
        -- concat_elu doubles the channels: PyTorch's sum 51.091675
        local ce = concat_elu(x)
        assert.are.same({ 2, 6, 8, 8 }, ce.shape)
        assert.is_true(close(ce:sum():item(), 51.091675, 1e-5))
    end)

    it("discretized_mix_logistic_loss and its gradient match PyTorch's on every branch", function()
        -- l = torch.zeros(2, 20, 8, 8); fill(l, 1, 3.0): big logits reach the edge cases
        -- (x = +-1), the mid-point pdf branch (cdf_delta < 1e-5) and the clamp at -7
        local l = tide.zeros(2, 20, 8, 8)
        fill(l, 1, 3.0)
        l:requires_grad_(true)
        local loss = discretized_mix_logistic_loss(x, l)
        loss:backward()
        assert.is_true(close(loss:item(), 4914.9375, 1e-5))
        assert.is_true(close((l.grad ^ 2):sum():item(), 72971.289, 1e-4))
        assert_close_list({ 0.9354382, -0.0246096, -0.0336104, 0.8613144, -0.5902416, 0.0808033 },
            head(l.grad, 6), 1e-4, "l.grad")
        -- the 1-channel form: x1 = images(2, 1, 8, 8), l1 (2, 6, 8, 8) filled as parameter 2
        local l1 = tide.zeros(2, 6, 8, 8)
        fill(l1, 2, 3.0)
        local loss1 = discretized_mix_logistic_loss_1d(images(2, 1, 8, 8), l1)
        assert.is_true(close(loss1:item(), 1131.8818, 1e-5))
    end)

    describe("PixelCNN(nr_resnet=1, nr_filters=8, nr_logistic_mix=2)", function()
        local model = PixelCNN({ nr_resnet = 1, nr_filters = 8, nr_logistic_mix = 2,
            input_channels = 3 })
        local params = model:named_parameters()
        for k, pair in ipairs(params) do
            fill(pair[2], k, 0.6)
        end
        model:eval()
        local out = model(x)

        it("lists PyTorch's 171 parameters, weight_norm's g and v after each bias", function()
            assert.are.equal(171, #params)
            assert.are.same({ "down_layers.1.u_stream.1.conv_input.conv.bias",
                "down_layers.1.u_stream.1.conv_input.conv.weight_g",
                "down_layers.1.u_stream.1.conv_input.conv.weight_v",
                "down_layers.1.u_stream.1.nin_skip.lin_a.bias" },
                { params[1][1], params[2][1], params[3][1], params[4][1] })
            assert.are.equal("nin_out.lin_a.weight_v", params[171][1])
        end)

        it("gives PyTorch's logits, loss and sample (eval mode)", function()
            assert.are.same({ 2, 20, 8, 8 }, out.shape)
            assert.is_true(close(out:sum():item(), 193.30893, 1e-4))
            assert.is_true(close((out ^ 2):sum():item(), 603.40039, 1e-4))
            local w = tide.sin(tide.arange(0, out:numel()):float() * 0.3):view(out:size())
            assert.is_true(close((out * w):sum():item(), 3.2611685, 1e-3))
            assert_close_list({ -0.551119, -0.5512486, -0.5510696, -0.5511042, -0.5509735 },
                head(out, 5), 1e-4, "logits")
            local loss = discretized_mix_logistic_loss(x, out)
            assert.is_true(close(loss:item(), 2497.0015, 1e-4))
            -- the gradients through every weight_norm'ed layer: PyTorch's
            -- sum(p.grad ** 2) 27835.894, the first weight_g's and nin_out's weight_v's
            model:zero_grad()
            discretized_mix_logistic_loss(x, model(x)):backward()
            local gradsq = 0
            for _, p in ipairs(model:parameters()) do
                gradsq = gradsq + (p.grad:double() ^ 2):sum():item()
            end
            assert.is_true(close(gradsq, 27835.894, 1e-3))
            assert_close_list({ -0.0003219, -0.0001135, -0.0001321, -0.0006079 },
                head(params[2][2].grad, 4), 1e-3, "weight_g.grad")
            assert_close_list({ 0.2212291, 0.0153014, -0.2859853, -0.3644823 },
                head(params[171][2].grad, 4), 1e-3, "nin_out weight_v.grad")
            -- the sample path concatenates the padding itself: the same logits
            assert.is_true(tide.allclose(model(x, true), out))

            local s, argmax = sample_from_discretized_mix_logistic(out, 2,
                { temp = noise({ 2, 8, 8, 2 }, 0), u = noise({ 2, 8, 8, 3 }, 7) })
            assert.are.same({ 2, 3, 8, 8 }, s.shape)
            -- PyTorch's argmax sums to 49 (0-based): 2 * 8 * 8 more here
            assert.are.equal(49 + 128, argmax:sum():item())
            assert.is_true(close(s:sum():item(), -29.544655, 1e-4))
            assert.is_true(close((s ^ 2):sum():item(), 254.14801, 1e-4))
            assert_close_list({ -0.4253998, -1.0, -1.0, 1.0, 1.0, 1.0 }, head(s, 6), 1e-4, "sample")
            -- a random draw stays in [-1, 1]
            local r = sample_from_discretized_mix_logistic(out, 2)
            assert.is_true(r:abs():max():item() <= 1)
        end)

        it("trains: 2 Adam steps lower the loss", function()
            tide.manual_seed(0)
            local net = PixelCNN({ nr_resnet = 1, nr_filters = 8, nr_logistic_mix = 2 })
            local imgs = tide.rand(2, 3, 8, 8) * 2 - 1
            local opt = optim.Adam(net:parameters(), 2e-3)
            net:eval()
            local before = discretized_mix_logistic_loss(imgs, net(imgs)):item()
            net:train()
            for _ = 1, 2 do
                opt:zero_grad()
                local loss = discretized_mix_logistic_loss(imgs, net(imgs))
                loss:backward()
                -- every parameter has a gradient (weight_norm's g and v included)
                for _, p in ipairs(net:parameters()) do
                    assert.is_not_nil(p.grad)
                end
                opt:step()
                assert_finite(loss:item(), "loss")
            end
            net:eval()
            local after = discretized_mix_logistic_loss(imgs, net(imgs)):item()
            assert_finite(after, "loss after")
            assert.is_true(after < before, ("loss %g -> %g"):format(before, after))
        end)
    end)
end)
