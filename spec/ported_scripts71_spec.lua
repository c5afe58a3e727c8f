-- ported_scripts71_spec.lua — bentrevett/pytorch-seq2seq's notebooks (legacy/ layout) "3 - Neural
-- Machine Translation by Jointly Learning to Align and Translate" (bidirectional GRU Encoder with
-- the tanh(fc(cat(hidden[-2], hidden[-1]))) initial state, additive Attention with v, Decoder
-- with torch.bmm(a, encoder_outputs), Seq2Seq with teacher forcing, init_weights,
-- count_parameters, the train loop with clip_grad_norm_) and "4 - Packed Padded Sequences,
-- Masking, Inference and BLEU" (pack_padded_sequence / pad_packed_sequence in the Encoder,
-- create_mask, masked_fill(mask == 0, -1e10), translate_sentence), ported line for line at tiny
-- sizes. torchtext, spacy and BLEU are left out: token ids are given directly, and a field is a
-- plain table with init_token, eos_token and vocab.stoi / vocab.itos.
-- The Python line stands above each Lua line that differs from it. Dims, token ids (Embedding
-- ids, class targets, argmax) are 1-based: every id is PyTorch's plus one (<pad> is 2).
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

---------------------------------------------------------------------------------------------
-- notebook 4's models (notebook 3's are these without src_len, the packing and the mask)
---------------------------------------------------------------------------------------------
-- class Encoder(nn.Module):
local Encoder = nn.Module:extend("Encoder")
-- def __init__(self, input_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout):
function Encoder:init(input_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout)
    self.embedding = nn.Embedding(input_dim, emb_dim)
    -- self.rnn = nn.GRU(emb_dim, enc_hid_dim, bidirectional = True)
    self.rnn = nn.GRU(emb_dim, enc_hid_dim, { bidirectional = true })
    self.fc = nn.Linear(enc_hid_dim * 2, dec_hid_dim)
    self.dropout = nn.Dropout(dropout)
end

function Encoder:forward(src, src_len)
    -- src = [src len, batch size]; src_len = [batch size]
    local embedded = self.dropout(self.embedding(src))
    -- need to explicitly put lengths on cpu!
    -- packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, src_len.to('cpu'))
    local packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, src_len:to("cpu"))
    local packed_outputs, hidden = self.rnn(packed_embedded)
    -- outputs, _ = nn.utils.rnn.pad_packed_sequence(packed_outputs)
    local outputs = nn.utils.rnn.pad_packed_sequence(packed_outputs)
    -- outputs = [src len, batch size, enc hid dim * 2], zeros where the input is padding
    -- hidden = torch.tanh(self.fc(torch.cat((hidden[-2,:,:], hidden[-1,:,:]), dim = 1)))
    hidden = tide.tanh(self.fc(tide.cat({ hidden[{ -2, {}, {} }], hidden[{ -1, {}, {} }] },
        { dim = 2 })))
    return outputs, hidden
end

-- class Attention(nn.Module):
local Attention = nn.Module:extend("Attention")
function Attention:init(enc_hid_dim, dec_hid_dim)
    self.attn = nn.Linear((enc_hid_dim * 2) + dec_hid_dim, dec_hid_dim)
    -- self.v = nn.Linear(dec_hid_dim, 1, bias = False)
    self.v = nn.Linear(dec_hid_dim, 1, { bias = false })
end

function Attention:forward(hidden, encoder_outputs, mask)
    -- batch_size = encoder_outputs.shape[1]
    local batch_size = encoder_outputs.shape[2] -- luacheck: ignore
    -- src_len = encoder_outputs.shape[0]
    local src_len = encoder_outputs.shape[1]
    -- repeat decoder hidden state src_len times
    -- hidden = hidden.unsqueeze(1).repeat(1, src_len, 1)
    -- (repeat is a Lua keyword: the method is spelled t["repeat"](t, ...))
    hidden = hidden:unsqueeze(2)
    hidden = hidden["repeat"](hidden, 1, src_len, 1)
    -- encoder_outputs = encoder_outputs.permute(1, 0, 2)
    encoder_outputs = encoder_outputs:permute(2, 1, 3)
    -- energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim = 2)))
    local energy = tide.tanh(self.attn(tide.cat({ hidden, encoder_outputs }, { dim = 3 })))
    -- attention = self.v(energy).squeeze(2)
    local attention = self.v(energy):squeeze(3)
    -- attention = attention.masked_fill(mask == 0, -1e10)
    -- (Lua's == compares a tensor with a number as false without asking the tensor: eq)
    attention = attention:masked_fill(mask:eq(0), -1e10)
    -- return F.softmax(attention, dim = 1)
    return F.softmax(attention, { dim = 2 })
end

-- class Decoder(nn.Module):
local Decoder = nn.Module:extend("Decoder")
function Decoder:init(output_dim, emb_dim, enc_hid_dim, dec_hid_dim, dropout, attention)
    self.output_dim = output_dim
    self.attention = attention
    self.embedding = nn.Embedding(output_dim, emb_dim)
    self.rnn = nn.GRU((enc_hid_dim * 2) + emb_dim, dec_hid_dim)
    self.fc_out = nn.Linear((enc_hid_dim * 2) + dec_hid_dim + emb_dim, output_dim)
    self.dropout = nn.Dropout(dropout)
end

function Decoder:forward(input, hidden, encoder_outputs, mask)
    -- input = input.unsqueeze(0)
    input = input:unsqueeze(1)
    local embedded = self.dropout(self.embedding(input))
    local a = self.attention(hidden, encoder_outputs, mask)
    -- a = a.unsqueeze(1)
    a = a:unsqueeze(2)
    -- encoder_outputs = encoder_outputs.permute(1, 0, 2)
    encoder_outputs = encoder_outputs:permute(2, 1, 3)
    -- weighted = torch.bmm(a, encoder_outputs)
    local weighted = tide.bmm(a, encoder_outputs)
    -- weighted = weighted.permute(1, 0, 2)
    weighted = weighted:permute(2, 1, 3)
    -- rnn_input = torch.cat((embedded, weighted), dim = 2)
    local rnn_input = tide.cat({ embedded, weighted }, { dim = 3 })
    -- output, hidden = self.rnn(rnn_input, hidden.unsqueeze(0))
    local output
    output, hidden = self.rnn(rnn_input, hidden:unsqueeze(1))
    -- assert (output == hidden).all()
    assert(output:eq(hidden):all():item())
    -- embedded = embedded.squeeze(0)
    embedded = embedded:squeeze(1)
    output = output:squeeze(1)
    weighted = weighted:squeeze(1)
    -- prediction = self.fc_out(torch.cat((output, weighted, embedded), dim = 1))
    local prediction = self.fc_out(tide.cat({ output, weighted, embedded }, { dim = 2 }))
    -- return prediction, hidden.squeeze(0), a.squeeze(1)
    return prediction, hidden:squeeze(1), a:squeeze(2)
end

-- class Seq2Seq(nn.Module):
local Seq2Seq = nn.Module:extend("Seq2Seq")
function Seq2Seq:init(encoder, decoder, src_pad_idx, device)
    self.encoder = encoder
    self.decoder = decoder
    self.src_pad_idx = src_pad_idx
    self.device = device
end

function Seq2Seq:create_mask(src)
    -- mask = (src != self.src_pad_idx).permute(1, 0)
    local mask = src:ne(self.src_pad_idx):permute(2, 1)
    return mask
end

-- def forward(self, src, src_len, trg, teacher_forcing_ratio = 0.5):
function Seq2Seq:forward(src, src_len, trg, teacher_forcing_ratio)
    teacher_forcing_ratio = teacher_forcing_ratio or 0.5
    -- batch_size = src.shape[1]
    local batch_size = src.shape[2]
    -- trg_len = trg.shape[0]
    local trg_len = trg.shape[1]
    local trg_vocab_size = self.decoder.output_dim
    -- outputs = torch.zeros(trg_len, batch_size, trg_vocab_size).to(self.device)
    local outputs = tide.zeros(trg_len, batch_size, trg_vocab_size):to(self.device)
    local encoder_outputs, hidden = self.encoder(src, src_len)
    -- first input to the decoder is the <sos> tokens
    -- input = trg[0,:]
    local input = trg[{ 1, {} }]
    local mask = self:create_mask(src)
    -- for t in range(1, trg_len):
    for t = 2, trg_len do
        -- output, hidden, _ = self.decoder(input, hidden, encoder_outputs, mask)
        local output
        output, hidden = self.decoder(input, hidden, encoder_outputs, mask)
        outputs[t] = output
        -- teacher_force = random.random() < teacher_forcing_ratio
        local teacher_force = math.random() < teacher_forcing_ratio
        -- top1 = output.argmax(1)
        local top1 = output:argmax(2)
        -- input = trg[t] if teacher_force else top1
        input = teacher_force and trg[t] or top1
    end
    return outputs
end

-- def init_weights(m):
local function init_weights(m)
    -- for name, param in m.named_parameters():
    for name, param in m:named_parameters() do
        -- if 'weight' in name:
        if name:find("weight", 1, true) then
            -- nn.init.normal_(param.data, mean=0, std=0.01)
            nn.init.normal_(param.data, { mean = 0, std = 0.01 })
        else
            nn.init.constant_(param.data, 0)
        end
    end
end

-- def count_parameters(model):
local function count_parameters(model)
    -- return sum(p.numel() for p in model.parameters() if p.requires_grad)
    local n = 0
    for _, p in ipairs(model:parameters()) do
        if p.requires_grad then n = n + p:numel() end
    end
    return n
end

-- def train(model, iterator, optimizer, criterion, clip):
local function train(model, iterator, optimizer, criterion, clip)
    model:train()
    local epoch_loss = 0
    -- for i, batch in enumerate(iterator):
    for _, batch in ipairs(iterator) do
        -- src, src_len = batch.src
        local src, src_len = batch.src[1], batch.src[2]
        local trg = batch.trg
        optimizer:zero_grad()
        local output = model(src, src_len, trg)
        -- output_dim = output.shape[-1]
        local output_dim = output.shape[-1]
        -- output = output[1:].view(-1, output_dim)
        output = output[{ { 2, -1 } }]:view(-1, output_dim)
        -- trg = trg[1:].view(-1)
        trg = trg[{ { 2, -1 } }]:view(-1)
        local loss = criterion(output, trg)
        loss:backward()
        -- torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        tide.nn.utils.clip_grad_norm_(model:parameters(), clip)
        optimizer:step()
        epoch_loss = epoch_loss + loss:item()
    end
    -- return epoch_loss / len(iterator)
    return epoch_loss / #iterator
end

-- def translate_sentence(sentence, src_field, trg_field, model, device, max_len = 50):
local function translate_sentence(sentence, src_field, trg_field, model, device, max_len)
    max_len = max_len or 50
    model:eval()
    -- tokens = [token.lower() for token in sentence]   (a list of tokens: no spacy)
    local tokens = {}
    for _, token in ipairs(sentence) do tokens[#tokens + 1] = token:lower() end
    -- tokens = [src_field.init_token] + tokens + [src_field.eos_token]
    table.insert(tokens, 1, src_field.init_token)
    tokens[#tokens + 1] = src_field.eos_token
    -- src_indexes = [src_field.vocab.stoi[token] for token in tokens]
    local src_indexes = {}
    for i, token in ipairs(tokens) do src_indexes[i] = src_field.vocab.stoi[token] end
    -- src_tensor = torch.LongTensor(src_indexes).unsqueeze(1).to(device)
    local src_tensor = tide.LongTensor(src_indexes):unsqueeze(2):to(device)
    -- src_len = torch.LongTensor([len(src_indexes)])
    local src_len = tide.LongTensor({ #src_indexes })
    -- with torch.no_grad():
    local encoder_outputs, hidden = tide.no_grad(function()
        return model.encoder(src_tensor, src_len)
    end)
    local mask = model:create_mask(src_tensor)
    -- trg_indexes = [trg_field.vocab.stoi[trg_field.init_token]]
    local trg_indexes = { trg_field.vocab.stoi[trg_field.init_token] }
    -- attentions = torch.zeros(max_len, 1, len(src_indexes)).to(device)
    local attentions = tide.zeros(max_len, 1, #src_indexes):to(device)
    -- for i in range(max_len):
    for i = 1, max_len do
        -- trg_tensor = torch.LongTensor([trg_indexes[-1]]).to(device)
        local trg_tensor = tide.LongTensor({ trg_indexes[#trg_indexes] }):to(device)
        local output, attention
        tide.no_grad(function()
            output, hidden, attention = model.decoder(trg_tensor, hidden, encoder_outputs, mask)
        end)
        attentions[i] = attention
        -- pred_token = output.argmax(1).item()
        local pred_token = output:argmax(2):item()
        trg_indexes[#trg_indexes + 1] = pred_token
        if pred_token == trg_field.vocab.stoi[trg_field.eos_token] then
            break
        end
    end
    -- trg_tokens = [trg_field.vocab.itos[i] for i in trg_indexes]
    local trg_tokens = {}
    for i, idx in ipairs(trg_indexes) do trg_tokens[i] = trg_field.vocab.itos[idx] end
    -- return trg_tokens[1:], attentions[:len(trg_tokens)-1]
    return { unpack(trg_tokens, 2) }, attentions[{ { 1, #trg_tokens - 1 } }]
end

---------------------------------------------------------------------------------------------
-- the tiny setup and PyTorch 1.13's values (weights filled from each parameter's index k in
-- named_parameters order: 0.6 * sin(2.3 * i + k) over its elements i = 0, 1, ... in float64)
---------------------------------------------------------------------------------------------
local INPUT_DIM, OUTPUT_DIM, EMB_DIM, ENC_HID_DIM, DEC_HID_DIM = 12, 14, 8, 8, 10
-- <unk> <pad> <sos> <eos> are torchtext's 0..3, here 1..4
local PAD, SOS, EOS = 2, 3, 4

local function field()
    local itos = { "<unk>", "<pad>", "<sos>", "<eos>" }
    for i = 5, 14 do itos[i] = "t" .. (i - 1) end -- PyTorch's id in the name
    local stoi = {}
    for i, s in ipairs(itos) do stoi[s] = i end
    return { init_token = "<sos>", eos_token = "<eos>", pad_token = "<pad>",
        vocab = { stoi = stoi, itos = itos } }
end

local function build(dropout)
    local attn = Attention(ENC_HID_DIM, DEC_HID_DIM)
    local enc = Encoder(INPUT_DIM, EMB_DIM, ENC_HID_DIM, DEC_HID_DIM, dropout)
    local dec = Decoder(OUTPUT_DIM, EMB_DIM, ENC_HID_DIM, DEC_HID_DIM, dropout, attn)
    -- model = Seq2Seq(enc, dec, SRC_PAD_IDX, device).to(device)
    return Seq2Seq(enc, dec, PAD, "cpu"):to("cpu")
end

local function det_fill(model)
    tide.no_grad(function()
        local k = 0
        for _, p in model:named_parameters() do
            k = k + 1
            local w = tide.sin(tide.arange(0, p:numel(), { dtype = "float64" }) * 2.3 + k) * 0.6
            p:copy_(w:float():view(p.shape))
        end
    end)
end

local function ids(t) -- PyTorch's 0-based ids, shifted
    return tide.tensor(t, { dtype = "int64" }) + 1
end

-- src = [src len 6, batch 3], lengths 6, 5, 3 (sorted, as BucketIterator's sort_within_batch)
local SRC_IDS = { { 2, 2, 2 }, { 5, 7, 9 }, { 6, 8, 10 }, { 11, 4, 3 }, { 8, 3, 1 }, { 3, 1, 1 } }
local TRG_IDS = { { 2, 2, 2 }, { 5, 6, 7 }, { 9, 12, 3 }, { 13, 3, 1 }, { 3, 1, 1 } }

local PT_NAMES = { "encoder.embedding.weight", "encoder.rnn.weight_ih_l0",
    "encoder.rnn.weight_hh_l0", "encoder.rnn.bias_ih_l0", "encoder.rnn.bias_hh_l0",
    "encoder.rnn.weight_ih_l0_reverse", "encoder.rnn.weight_hh_l0_reverse",
    "encoder.rnn.bias_ih_l0_reverse", "encoder.rnn.bias_hh_l0_reverse", "encoder.fc.weight",
    "encoder.fc.bias", "decoder.attention.attn.weight", "decoder.attention.attn.bias",
    "decoder.attention.v.weight", "decoder.embedding.weight", "decoder.rnn.weight_ih_l0",
    "decoder.rnn.weight_hh_l0", "decoder.rnn.bias_ih_l0", "decoder.rnn.bias_hh_l0",
    "decoder.fc_out.weight", "decoder.fc_out.bias" }
local PT_EO_B2 = { 0.4582068, 0.4365237, 0.5973258, 0.4839866, -0.2117106, 0.1384856, 
    0.4931845, -0.06162053, -0.5729089, -0.05917943, 0.4168046, -0.2911103, -0.5654649, -0.2011708, 
    0.4873205, 0.2428112, -0.17388, -0.1231821, 0.6346992, 0.4364402, 0, 0, 0, 0 }
local PT_EO_B3 = { 0.06116253, 0.6113406, 0.6765271, -0.5558256, 0.5357227, 0.706403, 
    0.8020848, -0.4553683, 0.4811263, 0.5618362, 0.7271729, 0.01881108, 0, 0, 0, 0, 0, 0, 0, 0, 0, 
    0, 0, 0 }
local PT_H = { -0.03348231, 0.9780011, 0.9465776, -0.1766124, -0.6425816, -0.9792726, 
    -0.8670901, 0.8144709, 0.8652698, 0.9554427, -0.02897816, 0.9707458, 0.9236944, -0.2574285, 
    -0.5941244, -0.9702704, -0.8250656, 0.8153162, 0.8237336, 0.9362833, 0.07115484, 0.9531472, 
    0.8380798, -0.4776236, -0.5401575, -0.9403684, -0.6692871, 0.8451265, 0.7282439, 0.8637706 }
local PT_A = { 0.1349051, 0.1409899, 0.180618, 0.1859656, 0.193156, 0.1643653, 0.1676742, 
    0.1917533, 0.2316952, 0.2067861, 0.2020912, 0, 0.1875163, 0.2531969, 0.2821073, 0.2771794, 0, 0 
}
local PT_OUT = { -1.224846, 0.5950684, -0.2177619, -1.297389, 0.6772255, -0.3001372, 
    -0.8565032, 0.2056704, 0.1481565, 0.1061175, 0.08661872, -0.5899764, 0.8609321, -0.451196, 
    -0.3306704, 1.527557, -1.143655, 0.3084276, 1.916678, -1.623905, 0.8248813, 1.93142, -2.086406, 
    1.682245, -0.5831594, 0.4673001, -0.6185242, 1.161423, -1.570647, 1.47971, -0.6613958, 
    0.8082506, -1.183195, 0.3818208, -0.7298438, 0.6738679 }
local PT_OUT_SUM, PT_LOSS = 1.9302149, 3.6932576
local PT_ATT = { 0.1618418, 0.1629734, 0.2160601, 0.2538108, 0.2053139, 0.1429446, 0.1877081, 
    0.2278613, 0.2278979, 0.2135881, 0.09810567, 0.1203065, 0.2275232, 0.2883889, 0.2656757, 
    0.1044535, 0.1416724, 0.2361012, 0.2579495, 0.2598233, 0.0865495, 0.117314, 0.229202, 
    0.2900315, 0.2769031, 0.09288379, 0.1056816, 0.1957472, 0.3338349, 0.2718526 }

-- the padded values of a [L, B, F] tensor's batch column b, features f1..f2, step-major
local function column(t, b, f1, f2)
    local out = {}
    for s = 1, t.shape[1] do
        for f = f1, f2 do out[#out + 1] = t[{ s, b, f }]:item() end
    end
    return out
end

describe("bentrevett/pytorch-seq2seq notebooks 3 and 4 (attention, packed sequences)", function()
    local src, src_len, trg
    before_each(function()
        src, trg = ids(SRC_IDS), ids(TRG_IDS)
        src_len = tide.tensor({ 6, 5, 3 }, { dtype = "int64" })
    end)

    it("names the parameters as PyTorch and counts them (count_parameters)", function()
        local model = build(0.5)
        local names = {}
        for name in model:named_parameters() do names[#names + 1] = name end
        assert.are.same(PT_NAMES, names)
        -- print(f'The model has {count_parameters(model):,} trainable parameters')
        assert.are.equal(3092, count_parameters(model))
        -- model.apply(init_weights)
        model:apply(init_weights)
        local enc_fc = model.encoder.fc
        assert.are.equal(0, enc_fc.bias:abs():max():item())
        local std = enc_fc.weight:std():item()
        assert.is_true(std > 0.005 and std < 0.02, "normal_(std = 0.01) drew std " .. std)
    end)

    it("matches PyTorch: packed encoder, masked attention, Seq2Seq output and loss", function()
        local model = build(0.5)
        det_fill(model)
        model:eval()
        local eo, h = model.encoder(src, src_len)
        assert.are.same({ 6, 3, 2 * ENC_HID_DIM }, eo.shape)
        -- padding positions are zeros (pad_packed_sequence), the rest PyTorch's
        assert_close_list(PT_EO_B2, column(eo, 2, 1, 4), 1e-4, "encoder_outputs[:, 1, :4]")
        assert_close_list(PT_EO_B3, column(eo, 3, 13, 16), 1e-4, "encoder_outputs[:, 2, -4:]")
        assert_close_list(PT_H, h:view(-1):totable(), 1e-4, "encoder hidden")
        local mask = model:create_mask(src)
        assert.are.same({ 3, 6 }, mask.shape)
        local a = model.decoder.attention(h, eo, mask)
        assert_close_list(PT_A, a:view(-1):totable(), 1e-4, "attention")
        local sums = a:sum(2):totable()
        for b = 1, 3 do assert.is_true(math.abs(sums[b] - 1) < 1e-5) end

        -- output = model(src, src_len, trg, 1): teacher forcing always (deterministic)
        local out = model(src, src_len, trg, 1)
        assert.are.same({ 5, 3, OUTPUT_DIM }, out.shape)
        assert.are.equal(0, out[1]:abs():max():item()) -- outputs[0] stays zeros
        assert_close_list(PT_OUT, out[{ { 2, -1 }, {}, { 1, 3 } }]:reshape(-1):totable(), 1e-4,
            "outputs[1:, :, :3]")
        assert.is_true(ported.close(out:sum():item(), PT_OUT_SUM, 1e-3))
        -- criterion = nn.CrossEntropyLoss(ignore_index = TRG_PAD_IDX)
        local criterion = nn.CrossEntropyLoss({ ignore_index = PAD })
        local loss = criterion(out[{ { 2, -1 } }]:view(-1, OUTPUT_DIM), trg[{ { 2, -1 } }]:view(-1))
        assert.is_true(ported.close(loss:item(), PT_LOSS, 1e-4), "loss " .. loss:item())
    end)

    it("translate_sentence's greedy tokens and attentions match PyTorch", function()
        local model = build(0.5)
        det_fill(model)
        local SRC, TRG = field(), field()
        local translation, attention = translate_sentence({ "T5", "t7", "t9" }, SRC, TRG, model,
            "cpu", 6)
        assert.are.same({ "t8", "<unk>", "t13", "t11", "<unk>", "t13" }, translation)
        assert.are.same({ 6, 1, 5 }, attention.shape)
        assert_close_list(PT_ATT, attention:reshape(-1):totable(), 1e-4, "attentions")
        assert.is_false(model.training)
    end)

    it("trains: init_weights, Adam, clip_grad_norm_, losses finite and falling", function()
        math.randomseed(1234)
        tide.manual_seed(1234)
        local model = build(0.5)
        model:apply(init_weights)
        -- optimizer = optim.Adam(model.parameters())
        local optimizer = optim.Adam(model:parameters())
        local criterion = nn.CrossEntropyLoss({ ignore_index = PAD })
        local iterator = { { src = { src, src_len }, trg = trg } }
        local losses = {}
        for epoch = 1, 3 do
            losses[epoch] = train(model, iterator, optimizer, criterion, 1)
            assert_finite(losses[epoch], "train loss")
        end
        -- uniform predictions at the start: log(OUTPUT_DIM)
        assert.is_true(math.abs(losses[1] - math.log(OUTPUT_DIM)) < 0.05, "loss " .. losses[1])
        assert.is_true(losses[2] < losses[1] and losses[3] < losses[2],
            ("losses %g %g %g"):format(unpack(losses)))
    end)

    it("the default enforce_sorted refuses an unsorted batch, as PyTorch's", function()
        local model = build(0)
        -- the batch in increasing length: BucketIterator's sort_within_batch = True is what
        -- the notebook relies on
        local rev = tide.LongTensor({ 3, 2, 1 })
        local ok, err = pcall(model.encoder, src:index_select(2, rev),
            src_len:index_select(1, rev))
        assert.is_false(ok)
        assert.matches("tide: pack_padded_sequence: lengths must be sorted in decreasing order",
            tostring(err), 1, true)
    end)
end)
