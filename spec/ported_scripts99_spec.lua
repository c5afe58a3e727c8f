-- ported_scripts99_spec.lua — NVIDIA/tacotron2's layers.py (LinearNorm, ConvNorm), utils.py
-- (get_mask_from_lengths), model.py (LocationLayer, Attention, Prenet, Postnet, Encoder with
-- pack_padded_sequence / pad_packed_sequence over a bidirectional LSTM, Decoder with teacher
-- forcing and gated inference, Tacotron2 with parse_batch / parse_output) and loss_function.py
-- (Tacotron2Loss), ported line for line at tiny sizes, then 2 Adam steps on a random batch. The
-- Python line stands above each Lua line that differs from it. Token ids are 1-based (PyTorch's
-- plus one); lengths and the mask's arange stay counts.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local Variable = tide.autograd.Variable

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- layers.py
---------------------------------------------------------------------------------------------
-- class LinearNorm(torch.nn.Module):
local LinearNorm = nn.Module:extend("LinearNorm")
-- def __init__(self, in_dim, out_dim, bias=True, w_init_gain='linear'):
function LinearNorm:init(in_dim, out_dim, bias, w_init_gain)
    if bias == nil then bias = true end
    w_init_gain = w_init_gain or "linear"
    -- self.linear_layer = torch.nn.Linear(in_dim, out_dim, bias=bias)
    self.linear_layer = nn.Linear(in_dim, out_dim, { bias = bias })
    -- torch.nn.init.xavier_uniform_(
    --     self.linear_layer.weight,
    --     gain=torch.nn.init.calculate_gain(w_init_gain))
    nn.init.xavier_uniform_(self.linear_layer.weight, nn.init.calculate_gain(w_init_gain))
end

function LinearNorm:forward(x)
    return self.linear_layer(x)
end

-- class ConvNorm(torch.nn.Module):
local ConvNorm = nn.Module:extend("ConvNorm")
-- def __init__(self, in_channels, out_channels, kernel_size=1, stride=1,
--              padding=None, dilation=1, bias=True, w_init_gain='linear'):
function ConvNorm:init(in_channels, out_channels, o)
    o = o or {}
    local kernel_size, stride, padding = o.kernel_size or 1, o.stride or 1, o.padding
    local dilation, bias, w_init_gain = o.dilation or 1, o.bias, o.w_init_gain or "linear"
    if bias == nil then bias = true end
    if padding == nil then
        assert(kernel_size % 2 == 1)
        -- padding = int(dilation * (kernel_size - 1) / 2)
        padding = math.floor(dilation * (kernel_size - 1) / 2)
    end
    -- self.conv = torch.nn.Conv1d(in_channels, out_channels,
    --                             kernel_size=kernel_size, stride=stride,
    --                             padding=padding, dilation=dilation,
    --                             bias=bias)
    self.conv = nn.Conv1d(in_channels, out_channels, kernel_size,
        { stride = stride, padding = padding, dilation = dilation, bias = bias })
    -- torch.nn.init.xavier_uniform_(
    --     self.conv.weight, gain=torch.nn.init.calculate_gain(w_init_gain))
    nn.init.xavier_uniform_(self.conv.weight, nn.init.calculate_gain(w_init_gain))
end

function ConvNorm:forward(signal)
    local conv_signal = self.conv(signal)
    return conv_signal
end

---------------------------------------------------------------------------------------------
-- utils.py
---------------------------------------------------------------------------------------------
local function get_mask_from_lengths(lengths)
    -- max_len = torch.max(lengths).item()
    local max_len = tide.max(lengths):item()
    -- ids = torch.arange(0, max_len, out=torch.cuda.LongTensor(max_len))
    local ids = tide.arange(0, max_len, { dtype = "int64" })
    -- mask = (ids < lengths.unsqueeze(1)).bool()
    local mask = ids:lt(lengths:unsqueeze(2)):bool()
    return mask
end

---------------------------------------------------------------------------------------------
-- model.py
---------------------------------------------------------------------------------------------
-- class LocationLayer(nn.Module):
local LocationLayer = nn.Module:extend("LocationLayer")
function LocationLayer:init(attention_n_filters, attention_kernel_size, attention_dim)
    -- padding = int((attention_kernel_size - 1) / 2)
    local padding = math.floor((attention_kernel_size - 1) / 2)
    -- self.location_conv = ConvNorm(2, attention_n_filters,
    --                               kernel_size=attention_kernel_size,
    --                               padding=padding, bias=False, stride=1,
    --                               dilation=1)
    self.location_conv = ConvNorm(2, attention_n_filters, { kernel_size = attention_kernel_size,
        padding = padding, bias = false, stride = 1, dilation = 1 })
    -- self.location_dense = LinearNorm(attention_n_filters, attention_dim,
    --                                  bias=False, w_init_gain='tanh')
    self.location_dense = LinearNorm(attention_n_filters, attention_dim, false, "tanh")
end

function LocationLayer:forward(attention_weights_cat)
    local processed_attention = self.location_conv(attention_weights_cat)
    -- processed_attention = processed_attention.transpose(1, 2)
    processed_attention = processed_attention:transpose(2, 3)
    processed_attention = self.location_dense(processed_attention)
    return processed_attention
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
function Attention:init(attention_rnn_dim, embedding_dim, attention_dim,
                        attention_location_n_filters, attention_location_kernel_size)
    -- self.query_layer = LinearNorm(attention_rnn_dim, attention_dim,
    --                               bias=False, w_init_gain='tanh')
    self.query_layer = LinearNorm(attention_rnn_dim, attention_dim, false, "tanh")
    -- self.memory_layer = LinearNorm(embedding_dim, attention_dim, bias=False,
    --                                w_init_gain='tanh')
    self.memory_layer = LinearNorm(embedding_dim, attention_dim, false, "tanh")
    -- self.v = LinearNorm(attention_dim, 1, bias=False)
    self.v = LinearNorm(attention_dim, 1, false)
    self.location_layer = LocationLayer(attention_location_n_filters,
        attention_location_kernel_size, attention_dim)
    -- self.score_mask_value = -float("inf")
    self.score_mask_value = -math.huge
end

function Attention:get_alignment_energies(query, processed_memory, attention_weights_cat)
    -- processed_query = self.query_layer(query.unsqueeze(1))
    local processed_query = self.query_layer(query:unsqueeze(2))
    local processed_attention_weights = self.location_layer(attention_weights_cat)
    -- energies = self.v(torch.tanh(
    --     processed_query + processed_attention_weights + processed_memory))
    local energies = self.v(tide.tanh(
        processed_query + processed_attention_weights + processed_memory))

    -- energies = energies.squeeze(-1)
    energies = energies:squeeze(-1)
    return energies
end

function Attention:forward(attention_hidden_state, memory, processed_memory,
                           attention_weights_cat, mask)
    local alignment = self:get_alignment_energies(
        attention_hidden_state, processed_memory, attention_weights_cat)

    -- if mask is not None:
    if mask ~= nil then
        -- alignment.data.masked_fill_(mask, self.score_mask_value)
        alignment.data:masked_fill_(mask, self.score_mask_value)
    end

    -- attention_weights = F.softmax(alignment, dim=1)
    local attention_weights = F.softmax(alignment, { dim = 2 })
    -- attention_context = torch.bmm(attention_weights.unsqueeze(1), memory)
    local attention_context = tide.bmm(attention_weights:unsqueeze(2), memory)
    -- attention_context = attention_context.squeeze(1)
    attention_context = attention_context:squeeze(2)

    return attention_context, attention_weights
end

-- class Prenet(nn.Module):
local Prenet = nn.Module:extend("Prenet")
function Prenet:init(in_dim, sizes)
    -- in_sizes = [in_dim] + sizes[:-1]
    local in_sizes = { in_dim }
    for i = 1, #sizes - 1 do in_sizes[#in_sizes + 1] = sizes[i] end
    -- self.layers = nn.ModuleList(
    --     [LinearNorm(in_size, out_size, bias=False)
    --      for (in_size, out_size) in zip(in_sizes, sizes)])
    local layers = {}
    for i = 1, #sizes do layers[i] = LinearNorm(in_sizes[i], sizes[i], false) end
    self.layers = nn.ModuleList(layers)
    -- (the test's knob: 0.5 as model.py; the value check sets 0, this dropout being always on)
    self.p = 0.5
end

function Prenet:forward(x)
    -- for linear in self.layers:
    for _, linear in ipairs(self.layers) do
        -- x = F.dropout(F.relu(linear(x)), p=0.5, training=True)
        x = F.dropout(F.relu(linear(x)), { p = self.p, training = true })
    end
    return x
end

-- class Postnet(nn.Module):
local Postnet = nn.Module:extend("Postnet")
function Postnet:init(hparams)
    self.convolutions = nn.ModuleList()

    -- self.convolutions.append(
    --     nn.Sequential(
    --         ConvNorm(hparams.n_mel_channels, hparams.postnet_embedding_dim,
    --                  kernel_size=hparams.postnet_kernel_size, stride=1,
    --                  padding=int((hparams.postnet_kernel_size - 1) / 2),
    --                  dilation=1, w_init_gain='tanh'),
    --         nn.BatchNorm1d(hparams.postnet_embedding_dim))
    -- )
    local pad = math.floor((hparams.postnet_kernel_size - 1) / 2)
    self.convolutions:append(nn.Sequential(
        ConvNorm(hparams.n_mel_channels, hparams.postnet_embedding_dim,
            { kernel_size = hparams.postnet_kernel_size, stride = 1, padding = pad,
              dilation = 1, w_init_gain = "tanh" }),
        nn.BatchNorm1d(hparams.postnet_embedding_dim)))

    -- for i in range(1, hparams.postnet_n_convolutions - 1):
    for _ = 1, hparams.postnet_n_convolutions - 2 do
        self.convolutions:append(nn.Sequential(
            ConvNorm(hparams.postnet_embedding_dim, hparams.postnet_embedding_dim,
                { kernel_size = hparams.postnet_kernel_size, stride = 1, padding = pad,
                  dilation = 1, w_init_gain = "tanh" }),
            nn.BatchNorm1d(hparams.postnet_embedding_dim)))
    end

    self.convolutions:append(nn.Sequential(
        ConvNorm(hparams.postnet_embedding_dim, hparams.n_mel_channels,
            { kernel_size = hparams.postnet_kernel_size, stride = 1, padding = pad,
              dilation = 1, w_init_gain = "linear" }),
        nn.BatchNorm1d(hparams.n_mel_channels)))
end

function Postnet:forward(x)
    -- for i in range(len(self.convolutions) - 1):
    for i = 1, #self.convolutions - 1 do
        -- x = F.dropout(torch.tanh(self.convolutions[i](x)), 0.5, self.training)
        x = F.dropout(tide.tanh(self.convolutions[i](x)), 0.5, self.training)
    end
    -- x = F.dropout(self.convolutions[-1](x), 0.5, self.training)
    x = F.dropout(self.convolutions[#self.convolutions](x), 0.5, self.training)

    return x
end

-- class Encoder(nn.Module):
local Encoder = nn.Module:extend("Encoder")
function Encoder:init(hparams)
    local convolutions = {}
    -- for _ in range(hparams.encoder_n_convolutions):
    for _ = 1, hparams.encoder_n_convolutions do
        -- conv_layer = nn.Sequential(
        --     ConvNorm(hparams.encoder_embedding_dim,
        --              hparams.encoder_embedding_dim,
        --              kernel_size=hparams.encoder_kernel_size, stride=1,
        --              padding=int((hparams.encoder_kernel_size - 1) / 2),
        --              dilation=1, w_init_gain='relu'),
        --     nn.BatchNorm1d(hparams.encoder_embedding_dim))
        local conv_layer = nn.Sequential(
            ConvNorm(hparams.encoder_embedding_dim, hparams.encoder_embedding_dim,
                { kernel_size = hparams.encoder_kernel_size, stride = 1,
                  padding = math.floor((hparams.encoder_kernel_size - 1) / 2),
                  dilation = 1, w_init_gain = "relu" }),
            nn.BatchNorm1d(hparams.encoder_embedding_dim))
        convolutions[#convolutions + 1] = conv_layer
    end
    self.convolutions = nn.ModuleList(convolutions)

    -- self.lstm = nn.LSTM(hparams.encoder_embedding_dim,
    --                     int(hparams.encoder_embedding_dim / 2), 1,
    --                     batch_first=True, bidirectional=True)
    self.lstm = nn.LSTM(hparams.encoder_embedding_dim,
        math.floor(hparams.encoder_embedding_dim / 2), 1,
        { batch_first = true, bidirectional = true })
end

function Encoder:forward(x, input_lengths)
    -- for conv in self.convolutions:
    for _, conv in ipairs(self.convolutions) do
        x = F.dropout(F.relu(conv(x)), 0.5, self.training)
    end

    -- x = x.transpose(1, 2)
    x = x:transpose(2, 3)

    -- pytorch tensor are not reversible, hence the conversion
    -- input_lengths = input_lengths.cpu().numpy()
    -- GAP: tide has no NumPy arrays (t:numpy() raises and names tolist); a Lua list serves
    input_lengths = input_lengths:cpu():tolist()
    -- x = nn.utils.rnn.pack_padded_sequence(
    --     x, input_lengths, batch_first=True)
    x = nn.utils.rnn.pack_padded_sequence(x, input_lengths, { batch_first = true })

    self.lstm:flatten_parameters()
    -- outputs, _ = self.lstm(x)
    local outputs = self.lstm(x)

    -- outputs, _ = nn.utils.rnn.pad_packed_sequence(
    --     outputs, batch_first=True)
    outputs = nn.utils.rnn.pad_packed_sequence(outputs, { batch_first = true })

    return outputs
end

function Encoder:inference(x)
    for _, conv in ipairs(self.convolutions) do
        x = F.dropout(F.relu(conv(x)), 0.5, self.training)
    end

    x = x:transpose(2, 3)

    self.lstm:flatten_parameters()
    local outputs = self.lstm(x)

    return outputs
end

-- class Decoder(nn.Module):
local Decoder = nn.Module:extend("Decoder")
function Decoder:init(hparams)
    self.n_mel_channels = hparams.n_mel_channels
    self.n_frames_per_step = hparams.n_frames_per_step
    self.encoder_embedding_dim = hparams.encoder_embedding_dim
    self.attention_rnn_dim = hparams.attention_rnn_dim
    self.decoder_rnn_dim = hparams.decoder_rnn_dim
    self.prenet_dim = hparams.prenet_dim
    self.max_decoder_steps = hparams.max_decoder_steps
    self.gate_threshold = hparams.gate_threshold
    self.p_attention_dropout = hparams.p_attention_dropout
    self.p_decoder_dropout = hparams.p_decoder_dropout

    self.prenet = Prenet(hparams.n_mel_channels * hparams.n_frames_per_step,
        { hparams.prenet_dim, hparams.prenet_dim })

    self.attention_rnn = nn.LSTMCell(hparams.prenet_dim + hparams.encoder_embedding_dim,
        hparams.attention_rnn_dim)

    self.attention_layer = Attention(
        hparams.attention_rnn_dim, hparams.encoder_embedding_dim,
        hparams.attention_dim, hparams.attention_location_n_filters,
        hparams.attention_location_kernel_size)

    self.decoder_rnn = nn.LSTMCell(hparams.attention_rnn_dim + hparams.encoder_embedding_dim,
        hparams.decoder_rnn_dim, 1)

    self.linear_projection = LinearNorm(
        hparams.decoder_rnn_dim + hparams.encoder_embedding_dim,
        hparams.n_mel_channels * hparams.n_frames_per_step)

    -- self.gate_layer = LinearNorm(
    --     hparams.decoder_rnn_dim + hparams.encoder_embedding_dim, 1,
    --     bias=True, w_init_gain='sigmoid')
    self.gate_layer = LinearNorm(hparams.decoder_rnn_dim + hparams.encoder_embedding_dim, 1,
        true, "sigmoid")
end

function Decoder:get_go_frame(memory)
    -- B = memory.size(0)
    local B = memory:size(1)
    -- decoder_input = Variable(memory.data.new(
    --     B, self.n_mel_channels * self.n_frames_per_step).zero_())
    local decoder_input = Variable(memory.data:new(
        B, self.n_mel_channels * self.n_frames_per_step):zero_())
    return decoder_input
end

function Decoder:initialize_decoder_states(memory, mask)
    -- B = memory.size(0)
    -- MAX_TIME = memory.size(1)
    local B = memory:size(1)
    local MAX_TIME = memory:size(2)

    self.attention_hidden = Variable(memory.data:new(B, self.attention_rnn_dim):zero_())
    self.attention_cell = Variable(memory.data:new(B, self.attention_rnn_dim):zero_())

    self.decoder_hidden = Variable(memory.data:new(B, self.decoder_rnn_dim):zero_())
    self.decoder_cell = Variable(memory.data:new(B, self.decoder_rnn_dim):zero_())

    self.attention_weights = Variable(memory.data:new(B, MAX_TIME):zero_())
    self.attention_weights_cum = Variable(memory.data:new(B, MAX_TIME):zero_())
    self.attention_context = Variable(memory.data:new(B, self.encoder_embedding_dim):zero_())

    self.memory = memory
    self.processed_memory = self.attention_layer.memory_layer(memory)
    self.mask = mask
end

function Decoder:parse_decoder_inputs(decoder_inputs)
    -- (B, n_mel_channels, T_out) -> (B, T_out, n_mel_channels)
    -- decoder_inputs = decoder_inputs.transpose(1, 2)
    decoder_inputs = decoder_inputs:transpose(2, 3)
    -- decoder_inputs = decoder_inputs.view(
    --     decoder_inputs.size(0),
    --     int(decoder_inputs.size(1)/self.n_frames_per_step), -1)
    decoder_inputs = decoder_inputs:view(decoder_inputs:size(1),
        math.floor(decoder_inputs:size(2) / self.n_frames_per_step), -1)
    -- (B, T_out, n_mel_channels) -> (T_out, B, n_mel_channels)
    -- decoder_inputs = decoder_inputs.transpose(0, 1)
    decoder_inputs = decoder_inputs:transpose(1, 2)
    return decoder_inputs
end

function Decoder:parse_decoder_outputs(mel_outputs, gate_outputs, alignments)
    -- (T_out, B) -> (B, T_out)
    -- alignments = torch.stack(alignments).transpose(0, 1)
    alignments = tide.stack(alignments):transpose(1, 2)
    -- (T_out, B) -> (B, T_out)
    -- gate_outputs = torch.stack(gate_outputs).transpose(0, 1)
    gate_outputs = tide.stack(gate_outputs):transpose(1, 2)
    gate_outputs = gate_outputs:contiguous()
    -- (T_out, B, n_mel_channels) -> (B, T_out, n_mel_channels)
    -- mel_outputs = torch.stack(mel_outputs).transpose(0, 1).contiguous()
    mel_outputs = tide.stack(mel_outputs):transpose(1, 2):contiguous()
    -- decouple frames per step
    -- mel_outputs = mel_outputs.view(
    --     mel_outputs.size(0), -1, self.n_mel_channels)
    mel_outputs = mel_outputs:view(mel_outputs:size(1), -1, self.n_mel_channels)
    -- (B, T_out, n_mel_channels) -> (B, n_mel_channels, T_out)
    -- mel_outputs = mel_outputs.transpose(1, 2)
    mel_outputs = mel_outputs:transpose(2, 3)

    return mel_outputs, gate_outputs, alignments
end

function Decoder:decode(decoder_input)
    -- cell_input = torch.cat((decoder_input, self.attention_context), -1)
    local cell_input = tide.cat({ decoder_input, self.attention_context }, -1)
    -- self.attention_hidden, self.attention_cell = self.attention_rnn(
    --     cell_input, (self.attention_hidden, self.attention_cell))
    self.attention_hidden, self.attention_cell = self.attention_rnn(
        cell_input, { self.attention_hidden, self.attention_cell })
    self.attention_hidden = F.dropout(
        self.attention_hidden, self.p_attention_dropout, self.training)

    -- attention_weights_cat = torch.cat(
    --     (self.attention_weights.unsqueeze(1),
    --      self.attention_weights_cum.unsqueeze(1)), dim=1)
    local attention_weights_cat = tide.cat({ self.attention_weights:unsqueeze(2),
        self.attention_weights_cum:unsqueeze(2) }, { dim = 2 })
    self.attention_context, self.attention_weights = self.attention_layer(
        self.attention_hidden, self.memory, self.processed_memory,
        attention_weights_cat, self.mask)

    -- self.attention_weights_cum += self.attention_weights
    self.attention_weights_cum:add_(self.attention_weights)
    -- decoder_input = torch.cat(
    --     (self.attention_hidden, self.attention_context), -1)
    decoder_input = tide.cat({ self.attention_hidden, self.attention_context }, -1)
    self.decoder_hidden, self.decoder_cell = self.decoder_rnn(
        decoder_input, { self.decoder_hidden, self.decoder_cell })
    self.decoder_hidden = F.dropout(
        self.decoder_hidden, self.p_decoder_dropout, self.training)

    -- decoder_hidden_attention_context = torch.cat(
    --     (self.decoder_hidden, self.attention_context), dim=1)
    local decoder_hidden_attention_context = tide.cat(
        { self.decoder_hidden, self.attention_context }, { dim = 2 })
    local decoder_output = self.linear_projection(decoder_hidden_attention_context)

    local gate_prediction = self.gate_layer(decoder_hidden_attention_context)
    return decoder_output, gate_prediction, self.attention_weights
end

function Decoder:forward(memory, decoder_inputs, memory_lengths)
    -- decoder_input = self.get_go_frame(memory).unsqueeze(0)
    local decoder_input = self:get_go_frame(memory):unsqueeze(1)
    decoder_inputs = self:parse_decoder_inputs(decoder_inputs)
    -- decoder_inputs = torch.cat((decoder_input, decoder_inputs), dim=0)
    decoder_inputs = tide.cat({ decoder_input, decoder_inputs }, { dim = 1 })
    decoder_inputs = self.prenet(decoder_inputs)

    -- self.initialize_decoder_states(
    --     memory, mask=~get_mask_from_lengths(memory_lengths))
    self:initialize_decoder_states(memory, get_mask_from_lengths(memory_lengths):logical_not())

    -- mel_outputs, gate_outputs, alignments = [], [], []
    local mel_outputs, gate_outputs, alignments = {}, {}, {}
    -- while len(mel_outputs) < decoder_inputs.size(0) - 1:
    while #mel_outputs < decoder_inputs:size(1) - 1 do
        -- decoder_input = decoder_inputs[len(mel_outputs)]
        decoder_input = decoder_inputs[#mel_outputs + 1]
        local mel_output, gate_output, attention_weights = self:decode(decoder_input)
        -- mel_outputs += [mel_output.squeeze(1)]
        -- gate_outputs += [gate_output.squeeze(1)]
        -- alignments += [attention_weights]
        mel_outputs[#mel_outputs + 1] = mel_output:squeeze(2)
        gate_outputs[#gate_outputs + 1] = gate_output:squeeze(2)
        alignments[#alignments + 1] = attention_weights
    end

    mel_outputs, gate_outputs, alignments = self:parse_decoder_outputs(
        mel_outputs, gate_outputs, alignments)

    return mel_outputs, gate_outputs, alignments
end

function Decoder:inference(memory)
    local decoder_input = self:get_go_frame(memory)

    -- self.initialize_decoder_states(memory, mask=None)
    self:initialize_decoder_states(memory, nil)

    local mel_outputs, gate_outputs, alignments = {}, {}, {}
    -- while True:
    while true do
        decoder_input = self.prenet(decoder_input)
        local mel_output, gate_output, alignment = self:decode(decoder_input)

        -- mel_outputs += [mel_output.squeeze(1)]
        mel_outputs[#mel_outputs + 1] = mel_output:squeeze(2)
        gate_outputs[#gate_outputs + 1] = gate_output
        alignments[#alignments + 1] = alignment

        -- if torch.sigmoid(gate_output.data) > self.gate_threshold:
        -- GAP: a Lua `if` takes any tensor as true, so the one-element comparison is read with
        -- :item() (PyTorch's bool() of a 1-element tensor)
        if tide.sigmoid(gate_output.data):gt(self.gate_threshold):item() then
            break
        -- elif len(mel_outputs) == self.max_decoder_steps:
        elseif #mel_outputs == self.max_decoder_steps then
            print("Warning! Reached max decoder steps")
            break
        end

        decoder_input = mel_output
    end

    mel_outputs, gate_outputs, alignments = self:parse_decoder_outputs(
        mel_outputs, gate_outputs, alignments)

    return mel_outputs, gate_outputs, alignments
end

-- class Tacotron2(nn.Module):
local Tacotron2 = nn.Module:extend("Tacotron2")
function Tacotron2:init(hparams)
    self.mask_padding = hparams.mask_padding
    self.fp16_run = hparams.fp16_run
    self.n_mel_channels = hparams.n_mel_channels
    self.n_frames_per_step = hparams.n_frames_per_step
    self.embedding = nn.Embedding(hparams.n_symbols, hparams.symbols_embedding_dim)
    -- std = sqrt(2.0 / (hparams.n_symbols + hparams.symbols_embedding_dim))
    local std = math.sqrt(2.0 / (hparams.n_symbols + hparams.symbols_embedding_dim))
    -- val = sqrt(3.0) * std  # uniform bounds for std
    local val = math.sqrt(3.0) * std -- uniform bounds for std
    -- self.embedding.weight.data.uniform_(-val, val)
    self.embedding.weight.data:uniform_(-val, val)
    self.encoder = Encoder(hparams)
    self.decoder = Decoder(hparams)
    self.postnet = Postnet(hparams)
end

function Tacotron2:parse_batch(batch)
    -- text_padded, input_lengths, mel_padded, gate_padded, \
    --     output_lengths = batch
    local text_padded, input_lengths, mel_padded, gate_padded, output_lengths =
        batch[1], batch[2], batch[3], batch[4], batch[5]
    -- text_padded = to_gpu(text_padded).long()   (to_gpu: no cuda here)
    text_padded = text_padded:long()
    input_lengths = input_lengths:long()
    -- max_len = torch.max(input_lengths.data).item()
    local max_len = tide.max(input_lengths.data):item()
    mel_padded = mel_padded:float()
    gate_padded = gate_padded:float()
    output_lengths = output_lengths:long()

    -- return (
    --     (text_padded, input_lengths, mel_padded, max_len, output_lengths),
    --     (mel_padded, gate_padded))
    return { text_padded, input_lengths, mel_padded, max_len, output_lengths },
        { mel_padded, gate_padded }
end

function Tacotron2:parse_output(outputs, output_lengths)
    -- if self.mask_padding and output_lengths is not None:
    if self.mask_padding and output_lengths ~= nil then
        -- mask = ~get_mask_from_lengths(output_lengths)
        local mask = get_mask_from_lengths(output_lengths):logical_not()
        -- mask = mask.expand(self.n_mel_channels, mask.size(0), mask.size(1))
        mask = mask:expand(self.n_mel_channels, mask:size(1), mask:size(2))
        -- mask = mask.permute(1, 0, 2)
        mask = mask:permute(2, 1, 3)

        -- outputs[0].data.masked_fill_(mask, 0.0)
        -- outputs[1].data.masked_fill_(mask, 0.0)
        -- outputs[2].data.masked_fill_(mask[:, 0, :], 1e3)  # gate energies
        outputs[1].data:masked_fill_(mask, 0.0)
        outputs[2].data:masked_fill_(mask, 0.0)
        outputs[3].data:masked_fill_(mask[{ {}, 1, {} }], 1e3) -- gate energies
    end

    return outputs
end

function Tacotron2:forward(inputs)
    -- text_inputs, text_lengths, mels, max_len, output_lengths = inputs
    local text_inputs, text_lengths, mels, _, output_lengths =
        inputs[1], inputs[2], inputs[3], inputs[4], inputs[5]
    -- text_lengths, output_lengths = text_lengths.data, output_lengths.data
    text_lengths, output_lengths = text_lengths.data, output_lengths.data

    -- embedded_inputs = self.embedding(text_inputs).transpose(1, 2)
    local embedded_inputs = self.embedding(text_inputs):transpose(2, 3)

    local encoder_outputs = self.encoder(embedded_inputs, text_lengths)

    -- mel_outputs, gate_outputs, alignments = self.decoder(
    --     encoder_outputs, mels, memory_lengths=text_lengths)
    local mel_outputs, gate_outputs, alignments = self.decoder(
        encoder_outputs, mels, text_lengths)

    local mel_outputs_postnet = self.postnet(mel_outputs)
    mel_outputs_postnet = mel_outputs + mel_outputs_postnet

    -- return self.parse_output(
    --     [mel_outputs, mel_outputs_postnet, gate_outputs, alignments],
    --     output_lengths)
    return self:parse_output({ mel_outputs, mel_outputs_postnet, gate_outputs, alignments },
        output_lengths)
end

function Tacotron2:inference(inputs)
    local embedded_inputs = self.embedding(inputs):transpose(2, 3)
    local encoder_outputs = self.encoder:inference(embedded_inputs)
    local mel_outputs, gate_outputs, alignments = self.decoder:inference(encoder_outputs)

    local mel_outputs_postnet = self.postnet(mel_outputs)
    mel_outputs_postnet = mel_outputs + mel_outputs_postnet

    local outputs = self:parse_output(
        { mel_outputs, mel_outputs_postnet, gate_outputs, alignments })

    return outputs
end

---------------------------------------------------------------------------------------------
-- loss_function.py
---------------------------------------------------------------------------------------------
-- class Tacotron2Loss(nn.Module):
local Tacotron2Loss = nn.Module:extend("Tacotron2Loss")
function Tacotron2Loss:init() end

function Tacotron2Loss:forward(model_output, targets)
    -- mel_target, gate_target = targets[0], targets[1]
    local mel_target, gate_target = targets[1], targets[2]
    mel_target.requires_grad = false
    gate_target.requires_grad = false
    gate_target = gate_target:view(-1, 1)

    -- mel_out, mel_out_postnet, gate_out, _ = model_output
    local mel_out, mel_out_postnet, gate_out = model_output[1], model_output[2], model_output[3]
    gate_out = gate_out:view(-1, 1)
    -- mel_loss = nn.MSELoss()(mel_out, mel_target) + \
    --     nn.MSELoss()(mel_out_postnet, mel_target)
    local mel_loss = nn.MSELoss()(mel_out, mel_target) + nn.MSELoss()(mel_out_postnet, mel_target)
    -- gate_loss = nn.BCEWithLogitsLoss()(gate_out, gate_target)
    local gate_loss = nn.BCEWithLogitsLoss()(gate_out, gate_target)
    return mel_loss + gate_loss
end

---------------------------------------------------------------------------------------------
-- the tests
---------------------------------------------------------------------------------------------
local hparams = {
    mask_padding = true, fp16_run = false, n_mel_channels = 4, n_frames_per_step = 1,
    n_symbols = 10, symbols_embedding_dim = 8, encoder_kernel_size = 5,
    encoder_n_convolutions = 1, encoder_embedding_dim = 8, attention_rnn_dim = 8,
    decoder_rnn_dim = 8, prenet_dim = 8, max_decoder_steps = 6, gate_threshold = 0.5,
    p_attention_dropout = 0.1, p_decoder_dropout = 0.1, attention_dim = 8,
    attention_location_n_filters = 4, attention_location_kernel_size = 3,
    postnet_embedding_dim = 8, postnet_kernel_size = 5, postnet_n_convolutions = 2,
}

-- for i, (n, p) in enumerate(m.named_parameters()):
--     p.copy_((torch.arange(p.numel(), dtype=torch.float32)*0.37 + (i+1)).sin()
--             .reshape(p.shape)*0.3)
local function det(m)
    tide.no_grad(function()
        for i, np in ipairs(m:named_parameters()) do
            local p = np[2]
            p:copy_((tide.arange(p:numel(), { dtype = "float32" }) * 0.37 + i):sin()
                :reshape(p.shape) * 0.3)
        end
    end)
    return m
end

-- text = [[1,2,3,4,5],[6,7,8,0,0]] (ids + 1 here); mel = (arange(32)*0.21).sin() with the second
-- sample's frame 4 zero; gate 1 from each last frame; lengths 5, 3 and 4, 3
local function batch()
    local text = tide.tensor({ { 2, 3, 4, 5, 6 }, { 7, 8, 9, 1, 1 } }, { dtype = "int64" })
    local mel = (tide.arange(32, { dtype = "float32" }) * 0.21):sin():reshape(2, 4, 4)
    mel[{ 2, {}, 4 }] = 0
    local gate = tide.tensor({ { 0, 0, 0, 1 }, { 0, 0, 1, 1 } })
    return { text, tide.tensor({ 5, 3 }), mel, gate, tide.tensor({ 4, 3 }) }
end

local function flat(t)
    return t:detach():contiguous():view(-1):totable()
end

local function model(prenet_p)
    tide.manual_seed(0)
    local m = det(Tacotron2(hparams))
    m.decoder.prenet.p = prenet_p
    return m
end

describe("ported NVIDIA/tacotron2 (layers.py, model.py, loss_function.py)", function()
    it("names parameters in PyTorch's order; get_mask_from_lengths marks the steps", function()
        local m = Tacotron2(hparams)
        local nps = m:named_parameters()
        assert.are.equal(40, #nps)
        assert.are.equal("embedding.weight", nps[1][1])
        assert.are.equal("encoder.lstm.weight_hh_l0_reverse", nps[11][1])
        assert.are.same({ 32, 16 }, nps[16][2]:size())
        assert.are.same({ 1, 16 }, nps[31][2]:size())
        assert.are.same({ { true, true, true }, { true, false, false } },
            get_mask_from_lengths(tide.tensor({ 3, 1 })):totable())
    end)

    it("the encoder and a teacher-forced forward match PyTorch 1.13 (eval, prenet p 0)", function()
        local m = model(0):eval()
        local x = m:parse_batch(batch())
        local enc = m.encoder(m.embedding(x[1]):transpose(2, 3), x[2])
        assert.are.same({ 2, 5, 8 }, enc:size())
        assert.is_true(ported.close(enc:sum():item(), -4.710595, 1e-4))
        assert_close_list({ -0.1236604, -0.1189094, -0.06028594, 0.01043044, -0.01815812,
            0.06389678, -0.1456572, -0.1268775, -0.1816294, -0.1684411, -0.0839794, 0.04016018,
            -0.01921278, 0.05192398, -0.1232497, -0.1028315, -0.2071625, -0.1875365,
            -0.09551939, 0.06167216, -0.01559294, 0.03186511, -0.08054742, -0.06370298,
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, flat(enc[2]), 1e-4, "enc[2]")

        local out = m(x)
        assert.are.same({ 2, 4, 4 }, out[1]:size())
        assert.are.same({ 2, 4 }, out[3]:size())
        assert.are.same({ 2, 4, 5 }, out[4]:size())
        assert_close_list({ -0.4476728, -0.4815212, -0.498956, -0.5084445, -0.3475796, -0.362336,
            -0.3728141, -0.3798109, -0.200873, -0.1946124, -0.1967666, -0.200359, -0.02704348,
            -0.000582546, 0.005868062, 0.006148733, -0.4432281, -0.4781682, -0.4966727, 0,
            -0.3438236, -0.3591276, -0.369873, 0, -0.1982958, -0.1919669, -0.1935515, 0,
            -0.02598123, 0.00115478, 0.008937776, 0 }, flat(out[1]), 1e-4, "mel")
        assert_close_list({ -0.2144037, -0.259395, -0.2855213, -0.2871538, -0.1225489,
            -0.1296967, -0.1442356, -0.1624242, -0.123432, -0.1152543, -0.1048906, -0.1034087,
            -0.04967597, -0.03008494, -0.03244274, -0.02933035, -0.2100669, -0.2561553,
            -0.2833566, 0, -0.1186858, -0.1263868, -0.141225, 0, -0.120873, -0.112616,
            -0.1016425, 0, -0.04866876, -0.02840906, -0.02945011, 0 }, flat(out[2]), 1e-4,
            "postnet mel")
        assert_close_list({ 0.09160898, 0.06247896, 0.05483887, 0.05399418, 0.09078011,
            0.06089355, 0.05182394, 1000 }, flat(out[3]), 1e-4, "gate")
        assert_close_list({ 0.2005426, 0.2001157, 0.1999214, 0.1997858, 0.1996346, 0.200171,
            0.2002769, 0.2000813, 0.1999448, 0.1995259, 0.1999967, 0.2003143, 0.2001217,
            0.1999862, 0.199581, 0.1998211, 0.200353, 0.2001632, 0.2000291, 0.1996337,
            0.3340138, 0.3332199, 0.3327664, 0, 0, 0.3332793, 0.333964, 0.3327567, 0, 0,
            0.3328669, 0.3341476, 0.3329854, 0, 0, 0.3324508, 0.3343369, 0.3332123, 0, 0 },
            flat(out[4]), 1e-4, "alignments")
    end)

    it("2 Adam steps with clip_grad_norm_: PyTorch's losses and norms (eval, p 0)", function()
        local m = model(0):eval()
        local x, y = m:parse_batch(batch())
        local criterion = Tacotron2Loss()
        -- optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate,
        --                              weight_decay=hparams.weight_decay)
        local optimizer = tide.optim.Adam(m:parameters(), { lr = 1e-2, weight_decay = 1e-6 })
        local losses, norms = {}, {}
        for _ = 1, 2 do
            m:zero_grad()
            local y_pred = m(x)
            local loss = criterion(y_pred, y)
            loss:backward()
            -- grad_norm = torch.nn.utils.clip_grad_norm_(
            --     model.parameters(), hparams.grad_clip_thresh)
            local grad_norm = nn.utils.clip_grad_norm_(m:parameters(), 1.0)
            optimizer:step()
            losses[#losses + 1] = loss:item()
            -- (tide's clip_grad_norm_ returns the total norm as a number, PyTorch's a 0-d tensor)
            norms[#norms + 1] = grad_norm
        end
        assert_close_list({ 1.600602, 1.501456 }, losses, 1e-4, "losses")
        assert_close_list({ 0.8455343, 0.621793 }, norms, 1e-3, "grad norms")
    end)

    it("trains: train mode, the prenet's dropout on, losses finite and falling", function()
        local m = model(0.5):train()
        local x, y = m:parse_batch(batch())
        local criterion = Tacotron2Loss()
        local optimizer = tide.optim.Adam(m:parameters(), { lr = 1e-2, weight_decay = 1e-6 })
        local losses = {}
        for _ = 1, 3 do
            m:zero_grad()
            local loss = criterion(m(x), y)
            loss:backward()
            nn.utils.clip_grad_norm_(m:parameters(), 1.0)
            optimizer:step()
            assert_finite(loss:item(), "loss")
            losses[#losses + 1] = loss:item()
        end
        assert.is_true(losses[3] < losses[1], table.concat(losses, " "))
    end)

    -- m.inference(torch.tensor([[1,2,3]])) under torch.no_grad(), printing to a list
    local function infer(m)
        local printed = {}
        -- (the file's own print, which Decoder:inference calls)
        local real_print = print
        print = function(s) printed[#printed + 1] = s end -- luacheck: ignore
        local ok, out = pcall(function()
            return tide.no_grad(function()
                return m:inference(tide.tensor({ { 2, 3, 4 } }, { dtype = "int64" }))
            end)
        end)
        print = real_print -- luacheck: ignore
        assert(ok, out)
        return out, printed
    end

    it("inference stops at the gate threshold: sigmoid(0.0908) > 0.5 after one frame", function()
        local out, printed = infer(model(0):eval())
        assert.are.same({}, printed)
        assert.are.same({ 1, 4, 1 }, out[1]:size())
        assert.are.same({ 1, 1, 1 }, out[3]:size())
        assert_close_list({ -0.2062642, -0.1419303, -0.09886847, -0.05347168 }, flat(out[2]), 1e-4,
            "postnet mel")
        assert_close_list({ 0.09083222 }, flat(out[3]), 1e-4, "gate")
        assert_close_list({ 0.3340137, 0.3332201, 0.3327662 }, flat(out[4]), 1e-4, "alignment")
    end)

    it("inference stops at max_decoder_steps with the warning (gate bias -0.3)", function()
        local m = model(0):eval()
        -- m.decoder.gate_layer.linear_layer.bias.data.fill_(-0.3)
        m.decoder.gate_layer.linear_layer.bias.data:fill_(-0.3)
        local out, printed = infer(m)
        assert.are.same({ "Warning! Reached max decoder steps" }, printed)
        assert.are.same({ 1, 4, 6 }, out[1]:size())
        assert.are.same({ 1, 6, 1 }, out[3]:size())
        assert.are.same({ 1, 6, 3 }, out[4]:size())
        assert_close_list({ -0.4432503, -0.4778044, -0.4957016, -0.5054272, -0.511001, -0.5143276,
            -0.3438611, -0.3582409, -0.3677064, -0.3737187, -0.3775125, -0.3798913, -0.1983437,
            -0.1906732, -0.190472, -0.1919866, -0.1935053, -0.1946262, -0.02603333, 0.002686732,
            0.01252835, 0.01570915, 0.01666348, 0.01694694 }, flat(out[1]), 1e-4, "mel")
        assert_close_list({ -0.2083347, -0.2506043, -0.2786525, -0.2880927, -0.291994, -0.2907996,
            -0.1183576, -0.1246466, -0.1284221, -0.1338256, -0.1467584, -0.1610966, -0.1229472,
            -0.1170617, -0.1137448, -0.1161948, -0.1091828, -0.101298, -0.04709941, -0.02216193,
            -0.01900707, -0.01537277, -0.01614759, -0.01613943 }, flat(out[2]), 1e-4,
            "postnet mel")
        assert_close_list({ -0.3745958, -0.4060846, -0.4172304, -0.4210639, -0.4223699,
            -0.4228559 }, flat(out[3]), 1e-4, "gate")
        assert_close_list({ 0.3340137, 0.3332201, 0.3327662, 0.3332778, 0.3339647, 0.3327575,
            0.3328647, 0.3341468, 0.3329885, 0.3324485, 0.3343329, 0.3332187, 0.3320283,
            0.3345217, 0.3334499, 0.3316046, 0.3347122, 0.3336833 }, flat(out[4]), 1e-4,
            "alignments")
    end)
end)
