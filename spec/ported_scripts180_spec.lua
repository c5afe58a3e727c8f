-- ported_scripts180_spec.lua — NVIDIA/waveglow's glow.py (fused_add_tanh_sigmoid_multiply,
-- WaveGlowLoss, Invertible1x1Conv with its QR-initialised weight made det > 0, log_det_W by
-- torch.logdet and the reverse through the cached inverse, WN with its weight_norm'ed start,
-- in, res_skip and cond layers, WaveGlow: the ConvTranspose1d upsample, the unfold/permute
-- grouping of spect and audio, early outputs, the affine coupling, infer with sigma, and
-- remove_weightnorm / remove), ported line for line at tiny sizes (n_mel_channels 4, n_flows 4,
-- n_group 4, n_early_every 2, n_early_size 2, WN n_layers 2, n_channels 8, kernel_size 3, audio
-- length 32, batch 2). The Python line stands above each Lua line that differs from it.
-- Values are checked against PyTorch 1.13 running glow.py with the same weights (formulas over
-- each parameter's index; each W a fixed matrix made orthogonal by QR, det > 0).
-- Channel slices and dims are 1-based; the flow index k stays 0-based (as glow.py's range).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local close = ported.close

---------------------------------------------------------------------------------------------
-- glow.py
---------------------------------------------------------------------------------------------
-- @torch.jit.script
-- def fused_add_tanh_sigmoid_multiply(input_a, input_b, n_channels):
local function fused_add_tanh_sigmoid_multiply(input_a, input_b, n_channels)
    -- n_channels_int = n_channels[0]
    local n_channels_int = n_channels[1]:item()
    local in_act = input_a + input_b
    -- t_act = torch.tanh(in_act[:, :n_channels_int, :])
    local t_act = tide.tanh(in_act[{ {}, { 1, n_channels_int }, {} }])
    -- s_act = torch.sigmoid(in_act[:, n_channels_int:, :])
    local s_act = tide.sigmoid(in_act[{ {}, { n_channels_int + 1, -1 }, {} }])
    local acts = t_act * s_act
    return acts
end

-- class WaveGlowLoss(torch.nn.Module):
local WaveGlowLoss = nn.Module:extend("WaveGlowLoss")
-- def __init__(self, sigma=1.0):
function WaveGlowLoss:init(sigma)
    self.sigma = sigma or 1.0
end

function WaveGlowLoss:forward(model_output)
    -- z, log_s_list, log_det_W_list = model_output
    local z, log_s_list, log_det_W_list = model_output[1], model_output[2], model_output[3]
    local log_s_total, log_det_W_total
    -- for i, log_s in enumerate(log_s_list):
    for i, log_s in ipairs(log_s_list) do
        -- if i == 0:
        if i == 1 then
            log_s_total = tide.sum(log_s)
            log_det_W_total = log_det_W_list[i]
        else
            log_s_total = log_s_total + tide.sum(log_s)
            -- log_det_W_total += log_det_W_list[i]
            log_det_W_total = log_det_W_total + log_det_W_list[i]
        end
    end

    local loss = tide.sum(z * z) / (2 * self.sigma * self.sigma) - log_s_total - log_det_W_total
    -- return loss/(z.size(0)*z.size(1)*z.size(2))
    return loss / (z:size(1) * z:size(2) * z:size(3))
end

-- class Invertible1x1Conv(torch.nn.Module):
local Invertible1x1Conv = nn.Module:extend("Invertible1x1Conv")
function Invertible1x1Conv:init(c)
    -- self.conv = torch.nn.Conv1d(c, c, kernel_size=1, stride=1, padding=0, bias=False)
    self.conv = nn.Conv1d(c, c, { kernel_size = 1, stride = 1, padding = 0, bias = false })

    -- Sample a random orthonormal matrix to initialize weights
    -- W = torch.qr(torch.FloatTensor(c, c).normal_())[0]
    local W = tide.qr(tide.FloatTensor(c, c):normal_())

    -- Ensure determinant is 1.0 not -1.0
    -- if torch.det(W) < 0:
    if tide.det(W):item() < 0 then
        -- W[:,0] = -1*W[:,0]
        W[{ {}, 1 }] = -1 * W[{ {}, 1 }]
    end
    W = W:view(c, c, 1)
    self.conv.weight.data = W
end

-- def forward(self, z, reverse=False):
function Invertible1x1Conv:forward(z, reverse)
    -- shape
    -- batch_size, group_size, n_of_groups = z.size()
    local batch_size, n_of_groups = z:size(1), z:size(3)

    local W = self.conv.weight:squeeze()

    if reverse then
        -- if not hasattr(self, 'W_inverse'):
        if self.W_inverse == nil then
            -- Reverse computation
            local W_inverse = W:float():inverse()
            -- W_inverse = Variable(W_inverse[..., None])
            W_inverse = tide.autograd.Variable(W_inverse:unsqueeze(-1))
            -- if z.type() == 'torch.cuda.HalfTensor':
            if z:type() == "torch.cuda.HalfTensor" then
                W_inverse = W_inverse:half()
            end
            self.W_inverse = W_inverse
        end
        -- z = F.conv1d(z, self.W_inverse, bias=None, stride=1, padding=0)
        z = F.conv1d(z, self.W_inverse, { bias = nil, stride = 1, padding = 0 })
        return z
    else
        -- Forward computation
        -- log_det_W = batch_size * n_of_groups * torch.logdet(W)
        local log_det_W = batch_size * n_of_groups * tide.logdet(W)
        z = self.conv(z)
        return z, log_det_W
    end
end

-- class WN(torch.nn.Module):
local WN = nn.Module:extend("WN")
-- def __init__(self, n_in_channels, n_mel_channels, n_layers, n_channels, kernel_size):
function WN:init(n_in_channels, n_mel_channels, n_layers, n_channels, kernel_size)
    assert(kernel_size % 2 == 1)
    assert(n_channels % 2 == 0)
    self.n_layers = n_layers
    self.n_channels = n_channels
    self.in_layers = nn.ModuleList()
    self.res_skip_layers = nn.ModuleList()

    local start = nn.Conv1d(n_in_channels, n_channels, 1)
    -- start = torch.nn.utils.weight_norm(start, name='weight')
    start = nn.utils.weight_norm(start, { name = "weight" })
    self.start = start

    -- Initializing last layer to 0 makes the affine coupling layers
    -- do nothing at first.  This helps with training stability
    local end_ = nn.Conv1d(n_channels, 2 * n_in_channels, 1)
    -- end.weight.data.zero_()
    end_.weight.data:zero_()
    end_.bias.data:zero_()
    -- self.end = end
    self["end"] = end_

    local cond_layer = nn.Conv1d(n_mel_channels, 2 * n_channels * n_layers, 1)
    -- self.cond_layer = torch.nn.utils.weight_norm(cond_layer, name='weight')
    self.cond_layer = nn.utils.weight_norm(cond_layer, { name = "weight" })

    -- for i in range(n_layers):
    for i = 0, n_layers - 1 do
        local dilation = 2 ^ i
        -- padding = int((kernel_size*dilation - dilation)/2)
        local padding = math.floor((kernel_size * dilation - dilation) / 2)
        -- in_layer = torch.nn.Conv1d(n_channels, 2*n_channels, kernel_size,
        --                            dilation=dilation, padding=padding)
        local in_layer = nn.Conv1d(n_channels, 2 * n_channels, kernel_size,
            { dilation = math.floor(dilation), padding = padding })
        in_layer = nn.utils.weight_norm(in_layer, { name = "weight" })
        self.in_layers:append(in_layer)

        -- last one is not necessary
        local res_skip_channels
        if i < n_layers - 1 then
            res_skip_channels = 2 * n_channels
        else
            res_skip_channels = n_channels
        end
        local res_skip_layer = nn.Conv1d(n_channels, res_skip_channels, 1)
        res_skip_layer = nn.utils.weight_norm(res_skip_layer, { name = "weight" })
        self.res_skip_layers:append(res_skip_layer)
    end
end

function WN:forward(forward_input)
    -- audio, spect = forward_input
    local audio, spect = forward_input[1], forward_input[2]
    audio = self.start(audio)
    local output = tide.zeros_like(audio)
    -- n_channels_tensor = torch.IntTensor([self.n_channels])
    local n_channels_tensor = tide.IntTensor({ self.n_channels })

    spect = self.cond_layer(spect)

    -- for i in range(self.n_layers):
    for i = 0, self.n_layers - 1 do
        local spect_offset = i * 2 * self.n_channels
        -- acts = fused_add_tanh_sigmoid_multiply(
        --     self.in_layers[i](audio),
        --     spect[:,spect_offset:spect_offset+2*self.n_channels,:],
        --     n_channels_tensor)
        local acts = fused_add_tanh_sigmoid_multiply(
            self.in_layers[i + 1](audio),
            spect[{ {}, { spect_offset + 1, spect_offset + 2 * self.n_channels }, {} }],
            n_channels_tensor)

        -- res_skip_acts = self.res_skip_layers[i](acts)
        local res_skip_acts = self.res_skip_layers[i + 1](acts)
        if i < self.n_layers - 1 then
            -- audio = audio + res_skip_acts[:,:self.n_channels,:]
            audio = audio + res_skip_acts[{ {}, { 1, self.n_channels }, {} }]
            -- output = output + res_skip_acts[:,self.n_channels:,:]
            output = output + res_skip_acts[{ {}, { self.n_channels + 1, -1 }, {} }]
        else
            output = output + res_skip_acts
        end
    end

    -- return self.end(output)
    return self["end"](output)
end

-- class WaveGlow(torch.nn.Module):
local WaveGlow = nn.Module:extend("WaveGlow")
-- def __init__(self, n_mel_channels, n_flows, n_group, n_early_every,
--              n_early_size, WN_config):
-- (upsample_kernel and upsample_stride, 1024 and 256 in glow.py, are arguments here so that
-- a tiny test keeps a tiny upsample)
function WaveGlow:init(n_mel_channels, n_flows, n_group, n_early_every, n_early_size, WN_config,
                       upsample_kernel, upsample_stride)
    -- self.upsample = torch.nn.ConvTranspose1d(n_mel_channels,
    --                                          n_mel_channels,
    --                                          1024, stride=256)
    self.upsample = nn.ConvTranspose1d(n_mel_channels, n_mel_channels,
        upsample_kernel or 1024, { stride = upsample_stride or 256 })
    assert(n_group % 2 == 0)
    self.n_flows = n_flows
    self.n_group = n_group
    self.n_early_every = n_early_every
    self.n_early_size = n_early_size
    self.WN = nn.ModuleList()
    self.convinv = nn.ModuleList()

    -- n_half = int(n_group/2)
    local n_half = math.floor(n_group / 2)

    -- Set up layers with the right sizes based on how many dimensions
    -- have been output already
    local n_remaining_channels = n_group
    -- for k in range(n_flows):
    for k = 0, n_flows - 1 do
        if k % self.n_early_every == 0 and k > 0 then
            -- n_half = n_half - int(self.n_early_size/2)
            n_half = n_half - math.floor(self.n_early_size / 2)
            n_remaining_channels = n_remaining_channels - self.n_early_size
        end
        self.convinv:append(Invertible1x1Conv(n_remaining_channels))
        -- self.WN.append(WN(n_half, n_mel_channels*n_group, **WN_config))
        self.WN:append(WN(n_half, n_mel_channels * n_group, WN_config.n_layers,
            WN_config.n_channels, WN_config.kernel_size))
    end
    self.n_remaining_channels = n_remaining_channels -- Useful during inference
end

function WaveGlow:forward(forward_input)
    -- forward_input[0] = mel_spectrogram:  batch x n_mel_channels x frames
    -- forward_input[1] = audio: batch x time
    -- spect, audio = forward_input
    local spect, audio = forward_input[1], forward_input[2]

    --  Upsample spectrogram to size of audio
    spect = self.upsample(spect)
    -- assert(spect.size(2) >= audio.size(1))
    assert(spect:size(3) >= audio:size(2))
    if spect:size(3) > audio:size(2) then
        -- spect = spect[:, :, :audio.size(1)]
        spect = spect[{ {}, {}, { 1, audio:size(2) } }]
    end

    -- spect = spect.unfold(2, self.n_group, self.n_group).permute(0, 2, 1, 3)
    spect = spect:unfold(3, self.n_group, self.n_group):permute(1, 3, 2, 4)
    -- spect = spect.contiguous().view(spect.size(0), spect.size(1), -1).permute(0, 2, 1)
    spect = spect:contiguous():view(spect:size(1), spect:size(2), -1):permute(1, 3, 2)

    -- audio = audio.unfold(1, self.n_group, self.n_group).permute(0, 2, 1)
    audio = audio:unfold(2, self.n_group, self.n_group):permute(1, 3, 2)
    local output_audio = {}
    local log_s_list = {}
    local log_det_W_list = {}

    -- for k in range(self.n_flows):
    for k = 0, self.n_flows - 1 do
        if k % self.n_early_every == 0 and k > 0 then
            -- output_audio.append(audio[:,:self.n_early_size,:])
            output_audio[#output_audio + 1] = audio[{ {}, { 1, self.n_early_size }, {} }]
            -- audio = audio[:,self.n_early_size:,:]
            audio = audio[{ {}, { self.n_early_size + 1, -1 }, {} }]
        end

        local log_det_W
        -- audio, log_det_W = self.convinv[k](audio)
        audio, log_det_W = self.convinv[k + 1](audio)
        log_det_W_list[#log_det_W_list + 1] = log_det_W

        -- n_half = int(audio.size(1)/2)
        local n_half = math.floor(audio:size(2) / 2)
        -- audio_0 = audio[:,:n_half,:]
        local audio_0 = audio[{ {}, { 1, n_half }, {} }]
        -- audio_1 = audio[:,n_half:,:]
        local audio_1 = audio[{ {}, { n_half + 1, -1 }, {} }]

        -- output = self.WN[k]((audio_0, spect))
        local output = self.WN[k + 1]({ audio_0, spect })
        -- log_s = output[:, n_half:, :]
        local log_s = output[{ {}, { n_half + 1, -1 }, {} }]
        -- b = output[:, :n_half, :]
        local b = output[{ {}, { 1, n_half }, {} }]
        audio_1 = tide.exp(log_s) * audio_1 + b
        log_s_list[#log_s_list + 1] = log_s

        -- audio = torch.cat([audio_0, audio_1],1)
        audio = tide.cat({ audio_0, audio_1 }, 2)
    end

    output_audio[#output_audio + 1] = audio
    -- return torch.cat(output_audio,1), log_s_list, log_det_W_list
    return tide.cat(output_audio, 2), log_s_list, log_det_W_list
end

-- def infer(self, spect, sigma=1.0):
-- GAP: glow.py draws its noise with torch.cuda.FloatTensor(...).normal_() (CUDA only, and
-- random); noise (the first audio) and early (a table of the z's by flow k) may be passed in
-- so that a test can feed it fixed noise; without them tide.randn draws it on spect's device.
function WaveGlow:infer(spect, sigma, noise, early)
    sigma = sigma or 1.0
    spect = self.upsample(spect)
    -- trim conv artifacts. maybe pad spec to kernel multiple
    -- time_cutoff = self.upsample.kernel_size[0] - self.upsample.stride[0]
    local time_cutoff = self.upsample.kernel_size[1] - self.upsample.stride[1]
    -- spect = spect[:, :, :-time_cutoff]
    spect = spect[{ {}, {}, { 1, -time_cutoff - 1 } }]

    -- spect = spect.unfold(2, self.n_group, self.n_group).permute(0, 2, 1, 3)
    spect = spect:unfold(3, self.n_group, self.n_group):permute(1, 3, 2, 4)
    -- spect = spect.contiguous().view(spect.size(0), spect.size(1), -1).permute(0, 2, 1)
    spect = spect:contiguous():view(spect:size(1), spect:size(2), -1):permute(1, 3, 2)

    -- audio = torch.cuda.FloatTensor(spect.size(0), self.n_remaining_channels,
    --                                spect.size(2)).normal_()
    local audio = noise or tide.randn(spect:size(1), self.n_remaining_channels, spect:size(3),
        { dtype = spect.dtype, device = spect.device })

    -- audio = torch.autograd.Variable(sigma*audio)
    audio = tide.autograd.Variable(sigma * audio)

    -- for k in reversed(range(self.n_flows)):
    for k = self.n_flows - 1, 0, -1 do
        -- n_half = int(audio.size(1)/2)
        local n_half = math.floor(audio:size(2) / 2)
        -- audio_0 = audio[:,:n_half,:]
        local audio_0 = audio[{ {}, { 1, n_half }, {} }]
        -- audio_1 = audio[:,n_half:,:]
        local audio_1 = audio[{ {}, { n_half + 1, -1 }, {} }]

        -- output = self.WN[k]((audio_0, spect))
        local output = self.WN[k + 1]({ audio_0, spect })

        -- s = output[:, n_half:, :]
        local s = output[{ {}, { n_half + 1, -1 }, {} }]
        -- b = output[:, :n_half, :]
        local b = output[{ {}, { 1, n_half }, {} }]
        audio_1 = (audio_1 - b) / tide.exp(s)
        -- audio = torch.cat([audio_0, audio_1],1)
        audio = tide.cat({ audio_0, audio_1 }, 2)

        -- audio = self.convinv[k](audio, reverse=True)
        audio = self.convinv[k + 1](audio, true)

        if k % self.n_early_every == 0 and k > 0 then
            -- z = torch.cuda.FloatTensor(spect.size(0), self.n_early_size,
            --                            spect.size(2)).normal_()
            local z = early and early[k] or tide.randn(spect:size(1), self.n_early_size,
                spect:size(3), { dtype = spect.dtype, device = spect.device })
            -- audio = torch.cat((sigma*z, audio),1)
            audio = tide.cat({ sigma * z, audio }, 2)
        end
    end

    -- audio = audio.permute(0,2,1).contiguous().view(audio.size(0), -1).data
    audio = audio:permute(1, 3, 2):contiguous():view(audio:size(1), -1).data
    return audio
end

-- def remove(conv_list):
local function remove(conv_list)
    local new_conv_list = nn.ModuleList()
    -- for old_conv in conv_list:
    for _, old_conv in ipairs(conv_list) do
        old_conv = nn.utils.remove_weight_norm(old_conv)
        new_conv_list:append(old_conv)
    end
    return new_conv_list
end

-- @staticmethod
-- def remove_weightnorm(model):
function WaveGlow.remove_weightnorm(model)
    local waveglow = model
    -- for WN in waveglow.WN:
    for _, WN_ in ipairs(waveglow.WN) do
        WN_.start = nn.utils.remove_weight_norm(WN_.start)
        WN_.in_layers = remove(WN_.in_layers)
        WN_.cond_layer = nn.utils.remove_weight_norm(WN_.cond_layer)
        WN_.res_skip_layers = remove(WN_.res_skip_layers)
    end
    return waveglow
end

-- PyTorch 1.13's values (the throwaway /tmp script: glow.py pasted, the same weights)
local PT_INV_Z = { -0.366311, 0.2482947, 0.8292947, 1.298054, 1.591128, 1.668849, 1.5207,
     1.166731, 0.3740295, 0.01941772, -0.3378223, -0.6493397, -0.8729721, -0.9784516, -0.9515022,
     -0.7957716, -0.007769899, 0.2921812, 0.552587, 0.7382029, 0.8239061, 0.7980977, 0.6642705,
     0.4405374, 0.5990418, 0.3470985, 0.04817709, -0.2572652, -0.527888, -0.7270632, -0.8278338,
     -0.8165611, -1.357136, -0.9123316, -0.3440468, 0.2708019, 0.8490004, 1.31229, 1.597967,
     1.667367, 0.8844298, 0.6682274, 0.3615835, 0.006001303, -0.3503942, -0.6593637, -0.8790931,
     -0.9798406, -0.5557481, -0.2961572, 0.003515317, 0.3027145, 0.5609402, 0.7432476, 0.824958,
     0.7950155, 0.8361136, 0.7653597, 0.5910179, 0.3366849, 0.0367831, -0.2680971, -0.5366919,
     -0.7326478 }
local PT_WN = { 0.2153715, 0.214238, 0.2128723, 0.2115812, 0.2103606, 0.2092366, 0.208237,
     0.2075026, 0.4242318, 0.4241292, 0.4239776, 0.4239074, 0.4238539, 0.4238151, 0.4237751,
     0.4237727, 0.4412519, 0.4422263, 0.4433569, 0.4445391, 0.4456767, 0.4467404, 0.447678,
     0.4484086, 0.2557935, 0.2574075, 0.2593128, 0.2612167, 0.2630347, 0.2647236, 0.2662179,
     0.2673536, 0.2079383, 0.2085789, 0.2094792, 0.2104609, 0.2114883, 0.2125431, 0.2135916,
     0.214549, 0.4239847, 0.4241076, 0.4241962, 0.4243104, 0.4244319, 0.4245596, 0.4246406,
     0.4247935, 0.4483019, 0.4478518, 0.4470891, 0.4462845, 0.4454455, 0.4445887, 0.4436659,
     0.4429457, 0.266976, 0.2661549, 0.2648832, 0.263521, 0.2620981, 0.2606415, 0.2591291,
     0.257859 }
local PT_Z = { -0.04763038, 0.1286514, 0.2137216, 0.1508947, -0.0180706, -0.1808162, -0.2291153,
     -0.1308445, 0.7999181, 0.3416583, -0.3014813, -0.700382, -0.5894738, -0.04231657, 0.5773727,
     0.8574476, 0.2538477, 0.09814331, -0.1980809, -0.4375332, -0.460993, -0.2529151, 0.04825756,
     0.2423148, -0.319486, 0.2446948, 1.316012, 2.180764, 2.264709, 1.512616, 0.4250891,
     -0.2750433, 0.04861755, 0.1900214, 0.1991777, 0.07010481, -0.1113292, -0.2244407, -0.1940069,
     -0.04026632, 0.6120015, 0.002500837, -0.5636535, -0.7114172, -0.3427496, 0.2969752,
     0.7822582, 0.7902634, 0.1999021, -0.05105082, -0.3432162, -0.4825625, -0.3763705,
     -0.09523129, 0.1739872, 0.2524467, -0.1212348, 0.7896858, 1.84814, 2.351915, 1.964916,
     0.9440539, -0.03184879, -0.3150463 }
local PT_LOG_S_SUMS = { -1.537044, 3.439939, 5.96326, 8.334496 }
local PT_LOG_DET_W = { 0, 4.768372e-07, -1.635402e-06, 1.192093e-06 }
local PT_GRAD_G = { 5.108637e-05, -0.0001891597, 8.17565e-05, 4.722839e-05, 3.817608e-05,
     -5.775093e-05, -0.0001364299, 0.0001627276, -4.912937e-07, -8.60503e-06, 1.946142e-05,
     -3.446784e-07, -9.939707e-07, 6.568039e-06, 1.60999e-06, -5.984838e-06 }
local PT_GRAD_V = { 2.8938e-05, 2.863551e-05, 2.521408e-05, 5.223055e-05, 5.413153e-05,
     4.811075e-05, 3.927798e-05, 4.308302e-05, 4.21211e-05, 1.959254e-05, 2.091812e-05,
     1.905327e-05, -8.682705e-06, -9.289764e-06, -1.037875e-05, -5.033274e-05, -5.124931e-05,
     -4.345797e-05, -4.790251e-05, -5.089162e-05, -4.751105e-05, -2.726858e-05, -3.024279e-05,
     -3.038563e-05, -3.211935e-05, -2.918109e-05, -2.335505e-05, -5.012505e-05, -5.260609e-05,
     -4.81852e-05, -4.133771e-05, -4.713144e-05, -4.678032e-05, -2.24921e-05, -2.148592e-05,
     -1.722878e-05, 1.23184e-05, 1.21711e-05, 1.16136e-05, 5.067199e-05, 4.989118e-05,
     4.118818e-05, 4.677842e-05, 5.225719e-05, 5.116414e-05, 3.138538e-05, 3.37724e-05,
     3.222002e-05, -8.071892e-05, -7.351521e-05, -6.2771e-05, -0.0001462356, -0.0001584796,
     -0.0001466589, -0.0001234604, -0.0001329439, -0.0001255207, -5.349143e-05, -5.212933e-05,
     -4.574815e-05, 3.060552e-05, 2.471465e-05, 2.267939e-05, 0.0001378247, 0.0001423747,
     0.0001238108, 0.0001430104, 0.0001567413, 0.0001478477, 8.457236e-05, 8.600536e-05,
     8.118655e-05, -4.616196e-05, -4.444251e-05, -3.894144e-05, -8.209569e-05, -8.466677e-05,
     -7.434398e-05, -6.032139e-05, -6.660093e-05, -6.633766e-05, -3.175272e-05, -3.353804e-05,
     -3.011332e-05, 1.30397e-05, 1.342341e-05, 1.6423e-05, 8.072246e-05, 8.173672e-05,
     6.750867e-05, 7.399674e-05, 7.871797e-05, 7.39087e-05, 4.226418e-05, 4.673723e-05,
     4.808908e-05, 2.078111e-05, 1.958871e-05, 1.588153e-05, 3.29612e-05, 3.469659e-05,
     3.225313e-05, 2.793205e-05, 3.151858e-05, 3.063983e-05, 1.428034e-05, 1.380658e-05,
     1.130742e-05, -8.461081e-06, -8.747113e-06, -7.72138e-06, -3.239651e-05, -3.205199e-05,
     -2.745078e-05, -3.145247e-05, -3.492227e-05, -3.393269e-05, -2.098688e-05, -2.268745e-05,
     -2.109284e-05, 6.88604e-06, 6.423572e-06, 5.570106e-06, 1.271849e-05, 1.370978e-05,
     1.260952e-05, 1.053392e-05, 1.131137e-05, 1.066596e-05, 4.542805e-06, 4.543792e-06,
     4.07633e-06, -2.499555e-06, -2.097827e-06, -1.986015e-06, -1.192036e-05, -1.23505e-05,
     -1.077513e-05, -1.235548e-05, -1.343084e-05, -1.257811e-05, -7.140564e-06, -7.355497e-06,
     -7.007094e-06, -7.269821e-05, -7.061222e-05, -6.104487e-05, -0.0001259186, -0.0001295118,
     -0.0001144722, -9.394102e-05, -0.000104657, -0.0001041282, -5.014161e-05, -5.257063e-05,
     -4.65257e-05, 2.19138e-05, 2.375625e-05, 2.705437e-05, 0.000124133, 0.000124737,
     0.0001035181, 0.0001138503, 0.0001217086, 0.0001149994, 6.716571e-05, 7.495088e-05,
     7.580985e-05, -9.587193e-05, -8.396735e-05, -6.61532e-05, -0.000150192, -0.0001601495,
     -0.0001481947, -0.0001282126, -0.000145168, -0.0001427083, -6.698745e-05, -6.186487e-05,
     -4.849186e-05, 3.855507e-05, 3.483213e-05, 3.199147e-05, 0.0001513584, 0.000149551,
     0.0001235509, 0.0001429831, 0.0001614576, 0.0001583722, 9.642961e-05, 0.0001007637,
     9.470811e-05, -9.45604e-07, -9.519382e-07, -8.682372e-07, -1.878519e-06, -1.879791e-06,
     -1.657558e-06, -1.539282e-06, -1.63484e-06, -1.503913e-06, -6.560339e-07, -6.550601e-07,
     -5.837656e-07, 3.179652e-07, 3.95591e-07, 4.205243e-07, 1.734572e-06, 1.636164e-06,
     1.371997e-06, 1.820367e-06, 1.885674e-06, 1.703222e-06, 1.02641e-06, 1.126612e-06,
     1.073069e-06, -3.14259e-06, -3.080497e-06, -2.642544e-06, -5.332905e-06, -5.460675e-06,
     -4.875736e-06, -4.082078e-06, -4.553498e-06, -4.50508e-06, -2.16694e-06, -2.247302e-06,
     -1.967686e-06, 1.026437e-06, 1.153872e-06, 1.225337e-06, 5.235068e-06, 5.209645e-06,
     4.370888e-06, 4.87144e-06, 5.211137e-06, 4.949085e-06, 2.966727e-06, 3.315839e-06,
     3.286237e-06, 3.190869e-06, 2.738638e-06, 2.15471e-06, 5.159636e-06, 5.486503e-06,
     5.026513e-06, 4.425017e-06, 4.983193e-06, 4.852315e-06, 2.255255e-06, 2.040778e-06,
     1.572838e-06, -1.256574e-06, -1.111215e-06, -1.051088e-06, -5.19551e-06, -5.069897e-06,
     -4.106531e-06, -4.939509e-06, -5.566664e-06, -5.408615e-06, -3.264468e-06, -3.383593e-06,
     -3.175505e-06, 2.915901e-06, 2.66266e-06, 2.320071e-06, 5.441389e-06, 6.02127e-06,
     5.500766e-06, 4.212773e-06, 4.550829e-06, 4.40797e-06, 1.889638e-06, 1.989431e-06,
     1.854274e-06, -8.948164e-07, -5.551939e-07, -6.143567e-07, -5.18958e-06, -5.649149e-06,
     -4.908762e-06, -5.121083e-06, -5.630506e-06, -5.295256e-06, -2.789435e-06, -2.840816e-06,
     -2.855801e-06, 9.739983e-08, -4.680955e-09, -3.298337e-08, 1.211734e-07, 1.549417e-07,
     6.961753e-08, -3.599671e-08, 2.623882e-08, 1.120082e-07, 9.99977e-08, 8.98049e-08,
     4.791666e-08, 5.565104e-08, 1.205891e-07, 2.45462e-08, -2.545123e-07, -2.725833e-07,
     -8.885495e-08, -6.094261e-09, -6.624944e-08, -8.93237e-08, 2.029351e-08, 2.231542e-08,
     -6.302006e-08, 3.282506e-06, 2.940236e-06, 2.358576e-06, 5.336271e-06, 5.759036e-06,
     5.404128e-06, 4.658842e-06, 5.190216e-06, 4.990571e-06, 2.239112e-06, 2.088347e-06,
     1.688639e-06, -1.374085e-06, -1.22764e-06, -1.043233e-06, -5.211421e-06, -5.235237e-06,
     -4.489951e-06, -5.202411e-06, -5.844878e-06, -5.674508e-06, -3.414949e-06, -3.536788e-06,
     -3.254764e-06, 5.89118e-07, 5.60783e-07, 4.9587e-07, 1.103364e-06, 1.185386e-06,
     1.069632e-06, 8.470452e-07, 9.138865e-07, 8.82251e-07, 3.875733e-07, 4.118579e-07,
     3.834414e-07, -1.785774e-07, -1.458363e-07, -1.629779e-07, -1.047933e-06, -1.107991e-06,
     -9.562206e-07, -1.032625e-06, -1.112958e-06, -1.037354e-06, -5.662404e-07, -5.970875e-07,
     -5.990523e-07, -3.661729e-06, -3.614229e-06, -3.096185e-06, -6.040637e-06, -6.163438e-06,
     -5.622512e-06, -4.876043e-06, -5.395462e-06, -5.278803e-06, -2.500959e-06, -2.538541e-06,
     -2.203165e-06, 1.374644e-06, 1.55669e-06, 1.516085e-06, 5.837301e-06, 5.742453e-06,
     4.941916e-06, 5.661953e-06, 6.047882e-06, 5.789238e-06, 3.613622e-06, 3.989853e-06,
     3.840325e-06 }
local PT_INFER = { 0.4621498, 0.1264106, -0.1234536, -0.2384818, 0.4145271, 0.1037246, -0.1013163,
     -0.3236737, 0.3569289, 0.08929806, -0.07474006, -0.4033391, 0.2902142, 0.08149343,
     -0.04441898, -0.475879, 0.2163605, 0.08027906, -0.01072885, -0.539419, 0.1375589, 0.08552094,
     0.02583607, -0.5923545, 0.056136, 0.09689203, 0.0646684, -0.6333694, -0.02550112, 0.1140007,
     0.1050126, -0.6614636, -0.4239511, 0.4195621, 0.3877153, -0.3551378, -0.4050274, 0.4577151,
     0.3933164, -0.2769964, -0.3732928, 0.4926414, 0.391157, -0.1978293, -0.3289829, 0.5246687,
     0.3808824, -0.1187402, -0.2733731, 0.5534171, 0.3623323, -0.04187167, -0.208083, 0.5785023,
     0.3355466, 0.03075027, -0.1350136, 0.5996876, 0.3007771, 0.09721789, -0.05632998, 0.6165946,
     0.2584206, 0.1559362 }
local PT_INV_LOGDET = 6.9541674
local PT_LOSS = 0.026647866
---------------------------------------------------------------------------------------------
-- checks against PyTorch 1.13
---------------------------------------------------------------------------------------------
-- the weights, the same formulas in the reference script: entry i (0-based, row-major) of the
-- s-th tensor filled is 0.25 sin(0.7 i + 1.3 s)
local function idx(n)
    return tide.arange(0, n, { dtype = "float64" })
end

local function fill(p, s)
    tide.no_grad(function()
        p:copy_((0.25 * tide.sin(0.7 * idx(p:numel()) + 1.3 * s)):view(p:size()):float())
    end)
end

-- a fixed c x c matrix made orthogonal by QR (R's diagonal made positive, so Q is unique),
-- its first column negated when det < 0, as Invertible1x1Conv does with its random one
local function fixed_W(c, k)
    local A = tide.sin(1.7 * idx(c * c) + 0.9 * k + 0.3):view(c, c)
        + 2 * tide.eye(c, { dtype = "float64" })
    local Q, R = tide.qr(A)
    Q = Q * tide.sign(tide.diagonal(R))
    if tide.det(Q):item() < 0 then
        Q[{ {}, 1 }] = -1 * Q[{ {}, 1 }]
    end
    return Q:float()
end

local function set_conv_W(inv, W)
    local c = W:size(1)
    tide.no_grad(function() inv.conv.weight:copy_(W:view(c, c, 1)) end)
end

local function set_wn(wn, s)
    local layers = { wn.start, wn.cond_layer }
    for _, m in ipairs(wn.in_layers) do layers[#layers + 1] = m end
    for _, m in ipairs(wn.res_skip_layers) do layers[#layers + 1] = m end
    for _, m in ipairs(layers) do
        fill(m.weight_g, s); fill(m.weight_v, s + 1); fill(m.bias, s + 2)
        s = s + 3
    end
    fill(wn["end"].weight, s); fill(wn["end"].bias, s + 1)
    return s + 2
end

local function flat(t)
    return t:detach():contiguous():view(-1):totable()
end

local function max_abs(t)
    return tide.abs(t):max():item()
end

local WN_CONFIG = { n_layers = 2, n_channels = 8, kernel_size = 3 }

-- the WaveGlow of the checks, its weights set; spect has 8 frames: the upsample (kernel 8,
-- stride 4) gives 36 samples, 32 after forward's trim and after infer's time_cutoff alike
local function make_waveglow()
    local wg = WaveGlow(4, 4, 4, 2, 2, WN_CONFIG, 8, 4)
    fill(wg.upsample.weight, 50); fill(wg.upsample.bias, 51)
    local s = 100
    for k = 0, 3 do
        set_conv_W(wg.convinv[k + 1], fixed_W(wg.convinv[k + 1].conv.weight:size(1), k + 1))
        s = set_wn(wg.WN[k + 1], s)
    end
    local spect = tide.sin(0.3 * tide.arange(0, 2 * 4 * 8) + 0.5):view(2, 4, 8)
    local audio = 0.5 * tide.cos(0.21 * tide.arange(0, 2 * 32)):view(2, 32)
    return wg, spect, audio
end

describe("NVIDIA/waveglow glow.py", function()
    it("Invertible1x1Conv: det > 0 at init, log_det_W and the reverse round trip", function()
        local inv = Invertible1x1Conv(4)
        local W0 = inv.conv.weight:squeeze()
        assert.is_true(tide.det(W0):item() > 0)
        assert.is_true(max_abs(W0:matmul(W0:t()) - tide.eye(4)) < 1e-5)
        -- a W that is not orthogonal, so that log_det_W is not 0
        set_conv_W(inv, fixed_W(4, 0):matmul(tide.diag(tide.tensor({ 1.2, 0.9, 1.1, 1.3 }))))
        local z0 = tide.sin(0.37 * tide.arange(0, 2 * 4 * 8)):view(2, 4, 8)
        local z, log_det_W = inv(z0)
        assert.are.same({ 2, 4, 8 }, z:size())
        assert_close_list(PT_INV_Z, flat(z), 1e-5, "z")
        assert.is_true(close(log_det_W:item(), PT_INV_LOGDET, 1e-5))
        local back = inv(z, true)
        assert.is_true(max_abs(back - z0) < 1e-5)
        -- the inverse is cached: a second reverse uses the same tensor
        local W_inverse = inv.W_inverse
        inv(z, true)
        assert.are.equal(W_inverse, inv.W_inverse)
        assert.is_false(W_inverse.requires_grad)
    end)

    it("WN's output matches PyTorch's", function()
        local wn = WN(2, 16, 2, 8, 3)
        assert.is_not_nil(wn.start.weight_g)
        assert.is_not_nil(wn.start.weight_v)
        set_wn(wn, 0)
        local a_in = tide.cos(0.3 * tide.arange(0, 2 * 2 * 8)):view(2, 2, 8)
        local s_in = tide.sin(0.11 * tide.arange(0, 2 * 16 * 8)):view(2, 16, 8)
        local out = wn({ a_in, s_in })
        assert.are.same({ 2, 4, 8 }, out:size())
        assert_close_list(PT_WN, flat(out), 1e-4, "WN")
    end)

    it("WaveGlow forward, the loss and a WN weight's gradients match PyTorch's", function()
        local wg, spect, audio = make_waveglow()
        local z, log_s_list, log_det_W_list = wg({ spect, audio })
        assert.are.same({ 2, 4, 8 }, z:size())
        assert_close_list(PT_Z, flat(z), 1e-4, "z")
        local sums, dets = {}, {}
        for i = 1, 4 do
            sums[i] = log_s_list[i]:sum():item()
            dets[i] = log_det_W_list[i]:item()
        end
        assert_close_list(PT_LOG_S_SUMS, sums, 1e-4, "log_s sums")
        assert_close_list(PT_LOG_DET_W, dets, 1e-4, "log_det_W")
        local loss = WaveGlowLoss(1.0)({ z, log_s_list, log_det_W_list })
        assert.is_true(close(loss:item(), PT_LOSS, 1e-4))
        loss:backward()
        local g = wg.WN[1].in_layers[1]
        assert_close_list(PT_GRAD_G, flat(g.weight_g.grad), 1e-3, "weight_g.grad")
        assert_close_list(PT_GRAD_V, flat(g.weight_v.grad), 1e-3, "weight_v.grad")
    end)

    it("infer on fixed noise: z gives back the audio, and matches PyTorch's", function()
        local wg, spect, audio = make_waveglow()
        local rec = tide.no_grad(function()
            local z = wg({ spect, audio })
            return wg:infer(spect, 1.0, z[{ {}, { 3, 4 }, {} }], { [2] = z[{ {}, { 1, 2 }, {} }] })
        end)
        assert.are.same({ 2, 32 }, rec:size())
        assert.is_true(max_abs(rec - audio) < 1e-5)
        local noise = 0.8 * tide.sin(0.13 * tide.arange(0, 2 * 2 * 8)):view(2, 2, 8)
        local early = 0.8 * tide.cos(0.17 * tide.arange(0, 2 * 2 * 8)):view(2, 2, 8)
        local out = tide.no_grad(function() return wg:infer(spect, 0.6, noise, { [2] = early }) end)
        assert_close_list(PT_INFER, flat(out), 1e-4, "infer")
        -- without noise: drawn on spect's device, finite
        local drawn = tide.no_grad(function() return wg:infer(spect, 0.6) end)
        assert.are.same({ 2, 32 }, drawn:size())
        assert_finite(drawn:sum():item(), "infer's audio")
    end)

    it("remove_weightnorm keeps the model's output, with plain weights", function()
        local wg, spect, audio = make_waveglow()
        local z = tide.no_grad(function() return (wg({ spect, audio })) end)
        WaveGlow.remove_weightnorm(wg)
        local names = {}
        for name in pairs(wg:state_dict()) do names[#names + 1] = name end
        assert.is_true(#names > 50)
        for _, name in ipairs(names) do
            assert.is_nil(name:find("weight_g"), name)
        end
        assert.is_not_nil(wg.WN[1].in_layers[2].weight)
        local z2 = tide.no_grad(function() return (wg({ spect, audio })) end)
        assert.is_true(max_abs(z2 - z) < 1e-5)
    end)
end)
