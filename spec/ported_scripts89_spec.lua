-- ported_scripts89_spec.lua — SeanNaren/deepspeech.pytorch's deepspeech_pytorch/model.py
-- (SequenceWise, MaskConv, InferenceBatchSoftmax, BatchRNN, Lookahead, DeepSpeech with its
-- get_seq_lens, forward and training_step's CTC loss, configure_optimizers' SGD) and
-- deepspeech_pytorch/decoder.py (Decoder, GreedyDecoder), ported line for line at tiny sizes: a
-- 1 x 9 x 12 spectrogram, 4 conv channels (32 in model.py), hidden 8, 2 LSTM layers, 5 labels.
-- The configs (deepspeech_pytorch/configs) are Lua tables of the fields used. The Python line
-- stands above each Lua line that differs from it. Dims, labels and time steps are 1-based.
-- Values, CTC loss, gradients, decodings and SGD losses: PyTorch 1.13's for the same weights.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

local CHANNELS = 4 -- model.py's 32 conv channels

---------------------------------------------------------------------------------------------
-- deepspeech_pytorch/model.py
---------------------------------------------------------------------------------------------
-- class SequenceWise(nn.Module):
local SequenceWise = nn.Module:extend("SequenceWise")
function SequenceWise:init(module)
    self.module = module
end

function SequenceWise:forward(x)
    -- t, n = x.size(0), x.size(1)
    local t, n = x:size(1), x:size(2)
    x = x:view(t * n, -1)
    x = self.module(x)
    x = x:view(t, n, -1)
    return x
end

-- class MaskConv(nn.Module):
local MaskConv = nn.Module:extend("MaskConv")
function MaskConv:init(seq_module)
    self.seq_module = seq_module
end

function MaskConv:forward(x, lengths)
    -- for module in self.seq_module:
    for _, module in ipairs(self.seq_module:children()) do
        x = module(x)
        -- mask = torch.BoolTensor(x.size()).fill_(0)
        local mask = tide.BoolTensor(x:size()):fill_(0)
        if x.is_cuda then
            mask = mask:cuda()
        end
        -- for i, length in enumerate(lengths):
        for i = 1, lengths:size(1) do
            local length = lengths[i]:item()
            -- if (mask[i].size(2) - length) > 0:
            if (mask[i]:size(3) - length) > 0 then
                -- mask[i].narrow(2, length, mask[i].size(2) - length).fill_(1)
                mask[i]:narrow(3, length + 1, mask[i]:size(3) - length):fill_(1)
            end
        end
        x = x:masked_fill(mask, 0)
    end
    return x, lengths
end

-- class InferenceBatchSoftmax(nn.Module):
local InferenceBatchSoftmax = nn.Module:extend("InferenceBatchSoftmax")
function InferenceBatchSoftmax:forward(input_)
    if not self.training then
        -- return F.softmax(input_, dim=-1)
        return F.softmax(input_, { dim = -1 })
    else
        return input_
    end
end

-- class BatchRNN(nn.Module):
local BatchRNN = nn.Module:extend("BatchRNN")
-- def __init__(self, input_size, hidden_size, rnn_type=nn.LSTM, bidirectional=False,
--              batch_norm=True):
function BatchRNN:init(input_size, hidden_size, rnn_type, bidirectional, batch_norm)
    rnn_type = rnn_type or nn.LSTM
    if batch_norm == nil then batch_norm = true end
    self.input_size = input_size
    self.hidden_size = hidden_size
    self.bidirectional = bidirectional or false
    -- self.batch_norm = SequenceWise(nn.BatchNorm1d(input_size)) if batch_norm else None
    self.batch_norm = batch_norm and SequenceWise(nn.BatchNorm1d(input_size)) or nil
    -- self.rnn = rnn_type(input_size=input_size, hidden_size=hidden_size,
    --                     bidirectional=bidirectional, bias=True)
    self.rnn = rnn_type(input_size, hidden_size, { bidirectional = self.bidirectional,
        bias = true })
    self.num_directions = bidirectional and 2 or 1
end

function BatchRNN:flatten_parameters()
    self.rnn:flatten_parameters()
end

function BatchRNN:forward(x, output_lengths, h)
    if self.batch_norm ~= nil then
        x = self.batch_norm(x)
    end
    -- x = nn.utils.rnn.pack_padded_sequence(x, output_lengths.cpu())
    x = nn.utils.rnn.pack_padded_sequence(x, output_lengths:cpu())
    x, h = self.rnn(x, h)
    -- x, _ = nn.utils.rnn.pad_packed_sequence(x)
    x = nn.utils.rnn.pad_packed_sequence(x)
    if self.bidirectional then
        -- x = x.view(x.size(0), x.size(1), 2, -1).sum(2).view(x.size(0), x.size(1), -1)
        x = x:view(x:size(1), x:size(2), 2, -1):sum(3):view(x:size(1), x:size(2), -1)
    end
    return x, h
end

-- class Lookahead(nn.Module):  (input and output TxNxH)
local Lookahead = nn.Module:extend("Lookahead")
function Lookahead:init(n_features, context)
    assert(context > 0)
    self.context = context
    self.n_features = n_features
    -- self.pad = (0, self.context - 1)
    self.pad = { 0, self.context - 1 }
    -- self.conv = nn.Conv1d(self.n_features, self.n_features, kernel_size=self.context,
    --     stride=1, groups=self.n_features, padding=0, bias=False)
    self.conv = nn.Conv1d(self.n_features, self.n_features, { kernel_size = self.context,
        stride = 1, groups = self.n_features, padding = 0, bias = false })
end

function Lookahead:forward(x)
    -- x = x.transpose(0, 1).transpose(1, 2)
    x = x:transpose(1, 2):transpose(2, 3)
    -- x = F.pad(x, pad=self.pad, value=0)
    x = F.pad(x, { pad = self.pad, value = 0 })
    x = self.conv(x)
    -- x = x.transpose(1, 2).transpose(0, 1).contiguous()
    x = x:transpose(2, 3):transpose(1, 2):contiguous()
    return x
end

-- labels.index(c): Python's list.index, 1-based
local function index_of(list, v)
    for i, x in ipairs(list) do
        if x == v then return i end
    end
    error("tide spec: " .. tostring(v) .. " is not in list")
end

-- class Decoder(object):
local Decoder = ported.class("Decoder")
-- def __init__(self, labels, blank_index=0):
function Decoder:__init__(labels, blank_index)
    self.labels = labels
    -- self.int_to_char = dict([(i, c) for (i, c) in enumerate(labels)])
    self.int_to_char = {}
    for i, c in ipairs(labels) do
        self.int_to_char[i] = c
    end
    self.blank_index = blank_index or 1
    -- space_index = len(labels)  # an out of bounds index for the space
    local space_index = #labels + 1
    -- if ' ' in labels: space_index = labels.index(' ')
    for i, c in ipairs(labels) do
        if c == " " then space_index = i break end
    end
    self.space_index = space_index
end

-- class GreedyDecoder(Decoder):
local GreedyDecoder = ported.class("GreedyDecoder")
setmetatable(GreedyDecoder, { __index = Decoder, __call = getmetatable(Decoder).__call })
function GreedyDecoder:__init__(labels, blank_index)
    Decoder.__init__(self, labels, blank_index)
end

-- def convert_to_strings(self, sequences, sizes=None, remove_repetitions=False,
--                        return_offsets=False):
function GreedyDecoder:convert_to_strings(sequences, sizes, remove_repetitions, return_offsets)
    local strings = {}
    local offsets = return_offsets and {} or nil
    -- for x in xrange(len(sequences)):
    for x = 1, sequences:size(1) do
        -- seq_len = sizes[x] if sizes is not None else len(sequences[x])
        local seq_len = sizes ~= nil and sizes[x]:item() or sequences[x]:size(1)
        local string, string_offsets = self:process_string(sequences[x], seq_len,
            remove_repetitions)
        strings[#strings + 1] = { string } -- We only return one path
        if return_offsets then
            offsets[#offsets + 1] = { string_offsets }
        end
    end
    if return_offsets then
        return strings, offsets
    else
        return strings
    end
end

function GreedyDecoder:process_string(sequence, size, remove_repetitions)
    local string = ""
    local offsets = {}
    -- for i in range(size):
    for i = 1, size do
        local char = self.int_to_char[sequence[i]:item()]
        if char ~= self.int_to_char[self.blank_index] then
            -- if remove_repetitions and i != 0 and
            --         char == self.int_to_char[sequence[i - 1].item()]:
            if remove_repetitions and i ~= 1 and
                char == self.int_to_char[sequence[i - 1]:item()] then -- luacheck: ignore
            elseif char == self.labels[self.space_index] then
                string = string .. " "
                offsets[#offsets + 1] = i
            else
                string = string .. char
                offsets[#offsets + 1] = i
            end
        end
    end
    -- return string, torch.tensor(offsets, dtype=torch.int)
    return string, tide.tensor(offsets, { dtype = "int32" })
end

function GreedyDecoder:decode(probs, sizes)
    -- _, max_probs = torch.max(probs, 2)
    local _, max_probs = tide.max(probs, 3)
    -- strings, offsets = self.convert_to_strings(max_probs.view(max_probs.size(0),
    --     max_probs.size(1)), sizes, remove_repetitions=True, return_offsets=True)
    local strings, offsets = self:convert_to_strings(max_probs:view(max_probs:size(1),
        max_probs:size(2)), sizes, true, true)
    return strings, offsets
end

-- class DeepSpeech(pl.LightningModule):  (the Lightning parts skipped)
local DeepSpeech = nn.Module:extend("DeepSpeech")
function DeepSpeech:init(labels, model_cfg, precision, optim_cfg, spect_cfg)
    self.model_cfg = model_cfg
    self.precision = precision
    self.optim_cfg = optim_cfg
    self.spect_cfg = spect_cfg
    -- self.bidirectional = True if OmegaConf.get_type(model_cfg) is BiDirectionalConfig else False
    self.bidirectional = model_cfg.type == "BiDirectionalConfig"

    self.labels = labels
    local num_classes = #self.labels

    -- self.conv = MaskConv(nn.Sequential(
    --     nn.Conv2d(1, 32, kernel_size=(41, 11), stride=(2, 2), padding=(20, 5)),
    --     nn.BatchNorm2d(32),
    --     nn.Hardtanh(0, 20, inplace=True),
    --     nn.Conv2d(32, 32, kernel_size=(21, 11), stride=(2, 1), padding=(10, 5)),
    --     nn.BatchNorm2d(32),
    --     nn.Hardtanh(0, 20, inplace=True)
    -- ))
    self.conv = MaskConv(nn.Sequential(
        nn.Conv2d(1, CHANNELS, { kernel_size = { 41, 11 }, stride = { 2, 2 },
            padding = { 20, 5 } }),
        nn.BatchNorm2d(CHANNELS),
        nn.Hardtanh(0, 20, true),
        nn.Conv2d(CHANNELS, CHANNELS, { kernel_size = { 21, 11 }, stride = { 2, 1 },
            padding = { 10, 5 } }),
        nn.BatchNorm2d(CHANNELS),
        nn.Hardtanh(0, 20, true)
    ))
    -- Based on above convolutions and spectrogram size using conv formula (W - F + 2P)/ S+1
    -- rnn_input_size = int(math.floor((self.spect_cfg.sample_rate * self.spect_cfg.window_size)
    --     / 2) + 1)
    local rnn_input_size = math.floor((self.spect_cfg.sample_rate * self.spect_cfg.window_size)
        / 2) + 1
    -- rnn_input_size = int(math.floor(rnn_input_size + 2 * 20 - 41) / 2 + 1)
    rnn_input_size = math.floor(math.floor(rnn_input_size + 2 * 20 - 41) / 2 + 1)
    -- rnn_input_size = int(math.floor(rnn_input_size + 2 * 10 - 21) / 2 + 1)
    rnn_input_size = math.floor(math.floor(rnn_input_size + 2 * 10 - 21) / 2 + 1)
    -- rnn_input_size *= 32
    rnn_input_size = rnn_input_size * CHANNELS

    -- *(BatchRNN(...) for x in range(self.model_cfg.hidden_layers - 1))
    local more = {}
    for _ = 1, self.model_cfg.hidden_layers - 1 do
        more[#more + 1] = BatchRNN(self.model_cfg.hidden_size, self.model_cfg.hidden_size,
            self.model_cfg.rnn_type, self.bidirectional)
    end
    -- self.rnns = nn.Sequential(BatchRNN(input_size=rnn_input_size,
    --     hidden_size=self.model_cfg.hidden_size, rnn_type=self.model_cfg.rnn_type.value,
    --     bidirectional=self.bidirectional, batch_norm=False), *(...))
    self.rnns = nn.Sequential(BatchRNN(rnn_input_size, self.model_cfg.hidden_size,
        self.model_cfg.rnn_type, self.bidirectional, false), unpack(more))

    -- self.lookahead = nn.Sequential(Lookahead(self.model_cfg.hidden_size,
    --     context=self.model_cfg.lookahead_context), nn.Hardtanh(0, 20, inplace=True)
    -- ) if not self.bidirectional else None
    self.lookahead = not self.bidirectional and nn.Sequential(
        Lookahead(self.model_cfg.hidden_size, self.model_cfg.lookahead_context),
        nn.Hardtanh(0, 20, true)) or nil

    local fully_connected = nn.Sequential(
        nn.BatchNorm1d(self.model_cfg.hidden_size),
        -- nn.Linear(self.model_cfg.hidden_size, num_classes, bias=False)
        nn.Linear(self.model_cfg.hidden_size, num_classes, { bias = false })
    )
    self.fc = nn.Sequential(
        SequenceWise(fully_connected)
    )
    self.inference_softmax = InferenceBatchSoftmax()
    -- self.criterion = CTCLoss(blank=self.labels.index('_'), reduction='sum', zero_infinity=True)
    self.criterion = nn.CTCLoss({ blank = index_of(self.labels, "_"), reduction = "sum",
        zero_infinity = true })
    self.evaluation_decoder = GreedyDecoder(self.labels) -- Decoder used for validation
end

function DeepSpeech:forward(x, lengths, hs)
    -- lengths = lengths.cpu().int()
    lengths = lengths:cpu():int()
    local output_lengths = self:get_seq_lens(lengths)
    x = self.conv(x, output_lengths)

    local sizes = x:size()
    -- x = x.view(sizes[0], sizes[1] * sizes[2], sizes[3])  # Collapse feature dimension
    x = x:view(sizes[1], sizes[2] * sizes[3], sizes[4])
    -- x = x.transpose(1, 2).transpose(0, 1).contiguous()  # TxNxH
    x = x:transpose(2, 3):transpose(1, 2):contiguous()

    -- if hs is None: hs = [None] * len(self.rnns)   (a Lua list of nils is empty)
    hs = hs or {}

    local new_hs = {}
    -- for i, rnn in enumerate(self.rnns):
    for i, rnn in ipairs(self.rnns:children()) do
        local h
        x, h = rnn(x, output_lengths, hs[i])
        new_hs[#new_hs + 1] = h
    end

    if not self.bidirectional then -- no need for lookahead layer in bidirectional
        x = self.lookahead(x)
    end

    x = self.fc(x)
    -- x = x.transpose(0, 1)
    x = x:transpose(1, 2)
    -- identity in training mode, softmax in eval mode
    x = self.inference_softmax(x)
    return x, output_lengths, new_hs
end

-- def training_step(self, batch, batch_idx):
function DeepSpeech:training_step(batch)
    local inputs, targets, input_percentages, target_sizes = unpack(batch)
    -- input_sizes = input_percentages.mul_(int(inputs.size(3))).int()
    local input_sizes = input_percentages:mul_(inputs:size(4)):int()
    -- out, output_sizes, hs = self(inputs, input_sizes)
    local out, output_sizes = self(inputs, input_sizes)
    -- out = out.transpose(0, 1)  # TxNxH
    out = out:transpose(1, 2)
    out = out:log_softmax(-1)

    local loss = self.criterion(out, targets, output_sizes, target_sizes)
    return loss
end

-- def configure_optimizers(self):  (the SGDConfig branch; the ExponentialLR left out)
function DeepSpeech:configure_optimizers()
    -- optimizer = torch.optim.SGD(params=self.parameters(), lr=self.optim_cfg.learning_rate,
    --     momentum=self.optim_cfg.momentum, nesterov=True,
    --     weight_decay=self.optim_cfg.weight_decay)
    return optim.SGD(self:parameters(), { lr = self.optim_cfg.learning_rate,
        momentum = self.optim_cfg.momentum, nesterov = true,
        weight_decay = self.optim_cfg.weight_decay })
end

function DeepSpeech:get_seq_lens(input_length)
    local seq_len = input_length
    -- for m in self.conv.modules():
    for _, m in ipairs(self.conv:modules()) do
        -- if type(m) == nn.modules.conv.Conv2d:
        if getmetatable(m) == nn.Conv2d then
            -- seq_len = ((seq_len + 2 * m.padding[1] - m.dilation[1] * (m.kernel_size[1] - 1)
            --     - 1) // m.stride[1] + 1)
            seq_len = (seq_len + 2 * m.padding[2] - m.dilation[2] * (m.kernel_size[2] - 1) - 1)
                :floor_divide(m.stride[2]) + 1
        end
    end
    return seq_len:int()
end

---------------------------------------------------------------------------------------------
-- the check: PyTorch 1.13's values for the same weights and batch
---------------------------------------------------------------------------------------------
-- labels = ['_', 'a', 'b', ' ', 'c']
local LABELS = { "_", "a", "b", " ", "c" }
-- configs/train_config.py's fields used (tiny sizes)
local SPECT = { sample_rate = 16000, window_size = 0.001 } -- 16000 * 0.001 / 2 + 1 = 9 freqs
local OPTIM = { learning_rate = 0.01, momentum = 0.9, weight_decay = 1e-5 }
local function model_cfg(bidirectional)
    return { type = bidirectional and "BiDirectionalConfig" or "UniDirectionalConfig",
        rnn_type = nn.LSTM, hidden_size = 8, hidden_layers = 2, lookahead_context = 2 }
end

-- for i, (n, p) in enumerate(model.named_parameters()):
--     p.copy_(torch.sin(torch.arange(p.numel()) * 0.37 + i).reshape(p.shape) * 0.3)
local function det_init(model)
    local names = {}
    tide.no_grad(function()
        for i, np in ipairs(model:named_parameters()) do
            local p = np[2]
            names[i] = np[1]
            p:copy_((tide.sin(tide.arange(0, p:numel()) * 0.37 + (i - 1)) * 0.3):reshape(p.shape))
        end
    end)
    return names
end

-- x = torch.sin(torch.arange(2 * 9 * 12) * 0.53).reshape(2, 1, 9, 12) * 2 + 0.5
-- x[1, :, :, 9:] = 0  (the shorter utterance, 9 of 12 frames, padded with zeros)
-- targets: "ab c" and "ba" concatenated, target_sizes [3, 2]; input_percentages [1.0, 0.75]
local function batch()
    local x = (tide.sin(tide.arange(0, 2 * 9 * 12) * 0.53):reshape(2, 1, 9, 12) * 2 + 0.5)
    x[{ 2, {}, {}, { 10, 12 } }] = 0
    return { x, tide.tensor({ 2, 3, 5, 3, 4 }), tide.tensor({ 1.0, 0.75 }), tide.tensor({ 3, 2 }) }
end

-- printed by the Python check (the classes above in PyTorch, the same weights and batch)
local TORCH = {
  ["bi"] = {
    names = { "conv.seq_module.0.weight", "conv.seq_module.0.bias", "conv.seq_module.1.weight",
        "conv.seq_module.1.bias", "conv.seq_module.3.weight", "conv.seq_module.3.bias",
        "conv.seq_module.4.weight", "conv.seq_module.4.bias", "rnns.0.rnn.weight_ih_l0",
        "rnns.0.rnn.weight_hh_l0", "rnns.0.rnn.bias_ih_l0", "rnns.0.rnn.bias_hh_l0",
        "rnns.0.rnn.weight_ih_l0_reverse", "rnns.0.rnn.weight_hh_l0_reverse",
        "rnns.0.rnn.bias_ih_l0_reverse", "rnns.0.rnn.bias_hh_l0_reverse",
        "rnns.1.batch_norm.module.weight", "rnns.1.batch_norm.module.bias",
        "rnns.1.rnn.weight_ih_l0", "rnns.1.rnn.weight_hh_l0", "rnns.1.rnn.bias_ih_l0",
        "rnns.1.rnn.bias_hh_l0", "rnns.1.rnn.weight_ih_l0_reverse",
        "rnns.1.rnn.weight_hh_l0_reverse", "rnns.1.rnn.bias_ih_l0_reverse",
        "rnns.1.rnn.bias_hh_l0_reverse", "fc.0.module.0.weight", "fc.0.module.0.bias",
        "fc.0.module.1.weight" },
    output_sizes = { 6, 5 },
    out_sum = 11.999999,
    out2 = { 0.2182155, 0.15113874, 0.23826246, 0.14050983, 0.25187355, 0.2175616, 0.15119796,
        0.23835397, 0.14008981, 0.25279665, 0.21726222, 0.1511346, 0.23846899, 0.13977508,
        0.25335914, 0.2171243, 0.15074603, 0.23881428, 0.1391442, 0.25417122, 0.21720345,
        0.14965683, 0.2396815, 0.13773845, 0.25571981, 0.22119974, 0.14613874, 0.24173565,
        0.13595565, 0.25497019 },
    out1_last = { 0.21715532, 0.14972782, 0.23963372, 0.13779764, 0.25568551 },
    out1_first = { 0.21820214, 0.15120743, 0.23820883, 0.14059354, 0.25178805 },
    decoded = { "c", "c" },
    grads = {
      ["conv.seq_module.0.weight"] = { sum = -0.014877159, first = { 0, 0, 0, 0 } },
      ["rnns.0.rnn.weight_hh_l0"] = { sum = 0.045056481, first = { -0.00025100747,
          0.00052870868, 0.00042165827, -0.00014017026 } },
      ["rnns.1.batch_norm.module.weight"] = { sum = 0.2190185, first = { 0.013051445,
          0.074883878, 0.10718454, -0.023931226 } },
      ["rnns.1.rnn.bias_ih_l0"] = { sum = 0.092738599, first = { 0.00010193419, -0.0071996879,
          0.0019730944, 0.010634646 } },
      ["rnns.1.rnn.bias_ih_l0_reverse"] = { sum = 0.12484205, first = { 0.0018860511,
          0.0056233257, -0.004454386, -0.011690421 } },
      ["fc.0.module.1.weight"] = { sum = 4.2840838e-08, first = { -0.32822955, -0.4526031,
          -0.14263448, -0.17971458 } },
    },
    losses = { 9.5242748, 9.4464016, 9.3368578 },
  },
  ["uni"] = {
    names = { "conv.seq_module.0.weight", "conv.seq_module.0.bias", "conv.seq_module.1.weight",
        "conv.seq_module.1.bias", "conv.seq_module.3.weight", "conv.seq_module.3.bias",
        "conv.seq_module.4.weight", "conv.seq_module.4.bias", "rnns.0.rnn.weight_ih_l0",
        "rnns.0.rnn.weight_hh_l0", "rnns.0.rnn.bias_ih_l0", "rnns.0.rnn.bias_hh_l0",
        "rnns.1.batch_norm.module.weight", "rnns.1.batch_norm.module.bias",
        "rnns.1.rnn.weight_ih_l0", "rnns.1.rnn.weight_hh_l0", "rnns.1.rnn.bias_ih_l0",
        "rnns.1.rnn.bias_hh_l0", "lookahead.0.conv.weight", "fc.0.module.0.weight",
        "fc.0.module.0.bias", "fc.0.module.1.weight" },
    output_sizes = { 6, 5 },
    out_sum = 12,
    out2 = { 0.21831067, 0.1473425, 0.24133109, 0.13546793, 0.2575478, 0.21821299, 0.14743876,
        0.24127245, 0.13552472, 0.25755107, 0.21820684, 0.14742889, 0.24128155, 0.13550718,
        0.25757548, 0.21823001, 0.14738914, 0.24130911, 0.13547127, 0.25760049, 0.21870236,
        0.14683661, 0.24166295, 0.13508071, 0.25771734, 0.21892825, 0.14662182, 0.24179251,
        0.13495895, 0.25769845 },
    out1_last = { 0.21871242, 0.14682181, 0.24167293, 0.13506837, 0.25772446 },
    out1_first = { 0.21831062, 0.14734256, 0.24133104, 0.13546798, 0.2575478 },
    decoded = { "c", "c" },
    grads = {
      ["conv.seq_module.0.weight"] = { sum = 0.076413326, first = { 0, 0, 0, 0 } },
      ["rnns.0.rnn.weight_hh_l0"] = { sum = -0.030512823, first = { 5.6193821e-05,
          -2.6463254e-05, 1.994062e-05, -2.0189604e-05 } },
      ["rnns.1.batch_norm.module.weight"] = { sum = -0.12528138, first = { 0.010230179,
          -0.0014006344, -0.04140269, -0.025195081 } },
      ["rnns.1.rnn.bias_ih_l0"] = { sum = -0.18791105, first = { 0.00036443374, 0.0034779641,
          -0.0036668968, -0.0019372002 } },
      ["lookahead.0.conv.weight"] = { sum = -0.10007779, first = { -0.0065929871, 0.012324627,
          -0.050578225, 0.046202254 } },
      ["fc.0.module.1.weight"] = { sum = 7.4505806e-09, first = { -0.33855459, -0.38075575,
          -0.35605943, -0.28934553 } },
    },
    losses = { 9.431179, 9.3871441, 9.3258848 },
  },
}

-- PyTorch's parameter name in tide's spelling: a Sequential's children are named 1, 2, ...
local function tide_name(name)
    return (name:gsub("%.(%d+)%.", function(i)
        return "." .. (tonumber(i) + 1) .. "."
    end))
end

-- got agrees with want to tol of the largest of want and floor (gradients of very different
-- scales; a sum that cancels to about 0 is compared at its entries' scale)
local function assert_close_scaled(want, got, tol, what, floor)
    local scale = floor or 1e-6
    for i = 1, #want do
        scale = math.max(scale, math.abs(want[i]))
    end
    assert(#want == #got, what .. ": lengths differ")
    for i = 1, #want do
        assert(math.abs(got[i] - want[i]) <= tol * scale, string.format("%s[%d]: %.8g, PyTorch "
            .. "%.8g", what, i, got[i], want[i]))
    end
end

local function flat(t)
    local out = {}
    local v = t:contiguous():view(-1)
    for i = 1, v:numel() do
        out[i] = v[i]:item()
    end
    return out
end

describe("deepspeech.pytorch's DeepSpeech with CTC, ported", function()
    it("GreedyDecoder collapses repeats, drops blanks and keeps spaces, within sizes", function()
        local decoder = GreedyDecoder(LABELS)
        -- argmax path a a _ a b b ' ' _ c c a (1-based labels), twice; sizes 11 and 9
        local path = { 2, 2, 1, 2, 3, 3, 4, 1, 5, 5, 2 }
        local probs = tide.full({ 2, #path, #LABELS }, 0.1)
        for n = 1, 2 do
            for t, c in ipairs(path) do
                probs[{ n, t, c }] = 0.6
            end
        end
        local strings, offsets = decoder:decode(probs, tide.tensor({ 11, 9 }, { dtype = "int32" }))
        assert.are.same({ { "aab ca" }, { "aab c" } }, strings)
        assert.are.same({ 1, 4, 5, 7, 9, 11 }, offsets[1][1]:tolist())
        assert.are.same({ 1, 4, 5, 7, 9 }, offsets[2][1]:tolist())
        assert.are.equal("int32", offsets[1][1].dtype)
    end)

    it("takes torch.BoolTensor(x.size()) as sizes and F.pad's pad by name", function()
        local x = tide.ones(2, 1, 3)
        -- torch.BoolTensor(x.size()): the sizes, not a table of data
        local mask = tide.BoolTensor(x:size()):fill_(0)
        assert.are.same({ 2, 1, 3 }, mask:size())
        assert.are.equal("bool", mask.dtype)
        assert.are.same({ 0, 3 }, tide.FloatTensor(tide.Size({ 0, 3 })):size())
        -- F.pad(x, pad=(0, 2), value=5)
        assert.are.same({ { { 1, 1, 1, 5, 5 } }, { { 1, 1, 1, 5, 5 } } },
            F.pad(x, { pad = { 0, 2 }, value = 5 }):tolist())
        assert.has_error(function() F.pad(x, { value = 0 }) end, "tide: pad: missing pad: give " ..
            "the sizes as argument #2 ({left, right, ...}) or by name (F.pad(x, {pad = {left, " ..
            "right}, value = 0}))")
    end)

    for _, kind in ipairs({ "bi", "uni" }) do
        local want = TORCH[kind]
        it(kind .. "directional: outputs, CTC loss, gradients, decoding and SGD as PyTorch's",
            function()
            local model = DeepSpeech(LABELS, model_cfg(kind == "bi"), 32, OPTIM, SPECT)
            local names = {}
            for i, name in ipairs(want.names) do
                names[i] = tide_name(name)
            end
            assert.are.same(names, det_init(model))
            model:eval()
            local inputs, _, input_percentages = unpack(batch())
            local out, output_sizes = tide.no_grad(function()
                return model(inputs, (input_percentages * 12):int())
            end)
            assert.are.same(want.output_sizes, output_sizes:tolist())
            assert.are.equal("int32", output_sizes.dtype)
            assert.are.same({ 2, 6, 5 }, out:size())
            assert.is_true(ported.close(out:sum():item(), want.out_sum, 1e-5))
            -- the second utterance's last frame is padding: PyTorch's value there too
            assert_close_list(want.out2, flat(out[2]), 1e-4, "out[2]")
            assert_close_list(want.out1_first, flat(out[1][1]), 1e-4, "out[1][1]")
            assert_close_list(want.out1_last, flat(out[1][6]), 1e-4, "out[1][6]")
            local strings = model.evaluation_decoder:decode(out, output_sizes)
            assert.are.same({ { want.decoded[1] }, { want.decoded[2] } }, strings)

            model:train()
            local optimizer = model:configure_optimizers()
            local params = {}
            for _, np in ipairs(model:named_parameters()) do
                params[np[1]] = np[2]
            end
            local losses = {}
            for step = 1, 3 do
                local loss = model:training_step(batch())
                optimizer:zero_grad()
                loss:backward()
                if step == 1 then
                    for name, g in pairs(want.grads) do
                        local grad = params[tide_name(name)].grad
                        local first = flat(grad:view(-1):narrow(1, 1, 4))
                        assert_close_scaled(g.first, first, 2e-3, name .. " grad")
                        local entries = grad:abs():max():item()
                        assert_close_scaled({ g.sum }, { grad:sum():item() }, 2e-3,
                            name .. " grad sum", entries)
                    end
                end
                losses[step] = loss:item()
                assert_finite(losses[step], "loss")
                optimizer:step()
            end
            assert_close_list(want.losses, losses, 1e-4, "losses")
            assert.is_true(losses[3] < losses[2] and losses[2] < losses[1])
        end)
    end
end)
