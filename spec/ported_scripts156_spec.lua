-- ported_scripts156_spec.lua — openai/whisper's whisper/decoding.py: MaximumLikelihoodRanker
-- (the length penalty), GreedyDecoder (temperature 0 argmax and > 0 Categorical sampling,
-- sum_logprobs with the eot check, finalize with F.pad), BeamSearchDecoder (reset, update with
-- the topk over each beam's logprobs, the finished sequences kept in Python dicts, finalize),
-- SuppressBlank, SuppressTokens and ApplyTimestampRules, ported line for line at tiny sizes
-- (vocab 30, batch 2, beam 2) with a stub tokenizer (eot 20, sot 21, no_timestamps 22,
-- timestamp_begin 23, encode(" ") = {5}) and a fixed "model" (logits from a formula of the
-- tokens so far). The Python line stands above each Lua line that differs from it.
-- Token ids keep whisper's 0-based values as data (in tensors, sequences, dict keys); 1 is added
-- where one indexes a tensor (a Python slice a:b of token ids is the inclusive {a + 1, b}).
-- Dims are 1-based; list positions (the ranker's choice, beam indices) are Lua's 1-based.
-- Python's dicts keyed by token tuples are an ordered table: keys (the tuple joined with ","),
-- values and the sequences, in insertion order, as Python 3.7's dicts keep it.
-- Reference values: PyTorch 1.13 running decoding.py's classes with the same stub tokenizer.
local tide = require("tide")
local F = tide.nn.functional
local Categorical = tide.distributions.Categorical
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local class = ported.class

-- -inf equal to -inf, numbers to a relative tol
local function assert_row(want, got, tol, what)
    assert(#want == #got, what .. ": length " .. #got .. ", PyTorch " .. #want)
    for i = 1, #want do
        local w, g = want[i], got[i]
        local ok = (w == -math.huge and g == -math.huge) or
            (w ~= -math.huge and ported.close(g, w, tol))
        assert(ok, string.format("%s[%d]: %s, PyTorch %s", what, i, tostring(g), tostring(w)))
    end
end

local function same_list(want, got, what)
    assert.are.same(want, got, what)
end

-- the stub tokenizer (whisper's Tokenizer fields used by decoding.py)
local tokenizer = {
    eot = 20, sot = 21, no_timestamps = 22, timestamp_begin = 23,
    encode = function(_, s)
        assert(s == " ")
        return { 5 }
    end,
}

-- the fixed "model":
-- s = (tokens.sum(-1, keepdim=True) % 17).float(); v = torch.arange(30).float()
-- logits = 2.0 * torch.sin(0.13 * v * (s + 1.0) + 0.5 * L) + 0.4 * torch.cos(v * 0.7)
-- logits[:, 20] += 0.8 * (L - 3)
local function model(tokens)
    local L = tokens:size(2)
    local s = (tokens:sum(-1, true) % 17):float()
    local v = tide.arange(30):float()
    local logits = 2.0 * tide.sin(0.13 * v * (s + 1.0) + 0.5 * L) + 0.4 * tide.cos(v * 0.7)
    logits[{ {}, 20 + 1 }]:add_(0.8 * (L - 3))
    return logits
end

-- Python's list + list
local function concat(a, b)
    local r = { unpack(a) }
    for _, x in ipairs(b) do r[#r + 1] = x end
    return r
end

-- an ordered dict keyed by token sequences (Python's dict of tuples)
local function odict()
    return { keys = {}, seqs = {}, vals = {}, n = 0 }
end
local function dset(d, seq, v)
    local k = table.concat(seq, ",")
    if d.vals[k] == nil then
        d.n = d.n + 1
        d.keys[d.n], d.seqs[k] = k, seq
    end
    d.vals[k] = v
end
-- sorted(d, key=d.get, reverse=True): Python's stable sort, ties in insertion order
local function sorted_desc(d)
    local order = {}
    for i, k in ipairs(d.keys) do order[i] = { k = k, i = i } end
    table.sort(order, function(a, b)
        local va, vb = d.vals[a.k], d.vals[b.k]
        if va ~= vb then return va > vb end
        return a.i < b.i
    end)
    local r = {}
    for i, o in ipairs(order) do r[i] = o.k end
    return r
end

---------------------------------------------------------------------------------------------
-- whisper/decoding.py
---------------------------------------------------------------------------------------------
-- class MaximumLikelihoodRanker(SequenceRanker):
local MaximumLikelihoodRanker = class("MaximumLikelihoodRanker")
function MaximumLikelihoodRanker:__init__(length_penalty)
    self.length_penalty = length_penalty
end
-- def rank(self, tokens: List[List[Tensor]], sum_logprobs: List[List[float]]):
function MaximumLikelihoodRanker:rank(tokens, sum_logprobs)
    local function scores(logprobs, lengths)
        local result = {}
        for i, logprob in ipairs(logprobs) do
            local length = lengths[i]
            local penalty
            if self.length_penalty == nil then
                penalty = length
            else
                -- from the Google NMT paper
                penalty = ((5 + length) / 6) ^ self.length_penalty
            end
            result[#result + 1] = logprob / penalty
        end
        return result
    end
    -- lengths = [[len(t) for t in s] for s in tokens]
    local lengths = {}
    for i, s in ipairs(tokens) do
        lengths[i] = {}
        -- len(t) of a 1-D tensor is its size
        for j, t in ipairs(s) do lengths[i][j] = #t end
    end
    -- return [np.argmax(scores(p, l)) for p, l in zip(sum_logprobs, lengths)]
    local r = {}
    for i, p in ipairs(sum_logprobs) do
        -- np.argmax: the first of the largest, a 1-based list position here
        r[i] = tide.tensor(scores(p, lengths[i]), { dtype = "float64" }):argmax():item()
    end
    return r
end

-- class GreedyDecoder(TokenDecoder):
local GreedyDecoder = class("GreedyDecoder")
function GreedyDecoder:__init__(temperature, eot)
    self.temperature = temperature
    self.eot = eot
end
function GreedyDecoder:update(tokens, logits, sum_logprobs)
    local next_tokens
    if self.temperature == 0 then
        -- next_tokens = logits.argmax(dim=-1)  (tide's argmax is 1-based: back to a token id)
        next_tokens = logits:argmax(-1) - 1
    else
        -- next_tokens = Categorical(logits=logits / self.temperature).sample()
        next_tokens = Categorical({ logits = logits / self.temperature }):sample() - 1
    end
    -- logprobs = F.log_softmax(logits.float(), dim=-1)
    local logprobs = F.log_softmax(logits:float(), -1)
    -- current_logprobs = logprobs[torch.arange(logprobs.shape[0]), next_tokens]
    local current_logprobs = logprobs[{ tide.arange(1, logprobs.shape[1] + 1), next_tokens + 1 }]
    -- sum_logprobs += current_logprobs * (tokens[:, -1] != self.eot)
    sum_logprobs:add_(current_logprobs * tokens[{ {}, -1 }]:ne(self.eot))
    -- next_tokens[tokens[:, -1] == self.eot] = self.eot
    next_tokens[tokens[{ {}, -1 }]:eq(self.eot)] = self.eot
    -- tokens = torch.cat([tokens, next_tokens[:, None]], dim=-1)
    tokens = tide.cat({ tokens, next_tokens:unsqueeze(2) }, -1)
    -- completed = (tokens[:, -1] == self.eot).all()
    local completed = tokens[{ {}, -1 }]:eq(self.eot):all()
    return tokens, completed
end
function GreedyDecoder:finalize(tokens, sum_logprobs)
    -- make sure each sequence has at least one EOT token at the end
    -- tokens = F.pad(tokens, (0, 1), value=self.eot)
    tokens = F.pad(tokens, { 0, 1 }, "constant", self.eot)
    return tokens, sum_logprobs:tolist()
end

-- the Inference stub: rearrange_kv_cache records the source rows it is given
local Inference = class("Inference")
function Inference:__init__() self.calls = {} end
function Inference:rearrange_kv_cache(source_indices)
    self.calls[#self.calls + 1] = { unpack(source_indices) }
end

-- class BeamSearchDecoder(TokenDecoder):
local BeamSearchDecoder = class("BeamSearchDecoder")
function BeamSearchDecoder:__init__(beam_size, eot, inference, patience)
    self.beam_size = beam_size
    self.eot = eot
    self.inference = inference
    self.patience = patience or 1.0
    -- self.max_candidates: int = round(beam_size * self.patience)
    -- (Python's round takes a half to even; floor(x + 0.5) agrees off the halves)
    self.max_candidates = math.floor(beam_size * self.patience + 0.5)
    self.finished_sequences = nil
    assert(self.max_candidates > 0,
        ("Invalid beam size (%s) or patience (%s)"):format(beam_size, tostring(patience)))
end
function BeamSearchDecoder:reset()
    self.finished_sequences = nil
end
function BeamSearchDecoder:update(tokens, logits, sum_logprobs)
    -- if tokens.shape[0] % self.beam_size != 0:
    if tokens.shape[1] % self.beam_size ~= 0 then
        error(("%s[0] %% %d != 0"):format(tostring(tokens.shape), self.beam_size))
    end
    -- n_audio = tokens.shape[0] // self.beam_size
    -- (math.floor: Lua 5.1 and LuaJIT have no //)
    local n_audio = math.floor(tokens.shape[1] / self.beam_size)
    if self.finished_sequences == nil then -- for the first update
        self.finished_sequences = {}
        for i = 1, n_audio do self.finished_sequences[i] = odict() end
    end
    local logprobs = F.log_softmax(logits:float(), -1)
    local next_tokens, source_indices, finished_sequences = {}, {}, {}
    -- for i in range(n_audio):
    for i = 0, n_audio - 1 do
        -- scores, sources, finished = {}, {}, {}  (scores and finished ordered dicts)
        local scores, sources, finished = odict(), {}, odict()
        -- STEP 1: calculate the cumulative log probabilities for possible candidates
        for j = 0, self.beam_size - 1 do
            -- idx = i * self.beam_size + j  (a 0-based row, as whisper's source_indices)
            local idx = i * self.beam_size + j
            -- prefix = tokens[idx].tolist()
            local prefix = tokens[idx + 1]:tolist()
            -- for logprob, token in zip(*logprobs[idx].topk(self.beam_size + 1)):
            local lps, toks = logprobs[idx + 1]:topk(self.beam_size + 1)
            for r = 1, self.beam_size + 1 do
                local logprob, token = lps[r], toks[r] - 1
                -- new_logprob = (sum_logprobs[idx] + logprob).item()
                local new_logprob = (sum_logprobs[idx + 1] + logprob):item()
                -- sequence = tuple(prefix + [token.item()])
                local sequence = concat(prefix, { token:item() })
                dset(scores, sequence, new_logprob)
                sources[table.concat(sequence, ",")] = idx
            end
        end
        -- STEP 2: rank the candidates and keep the top beam_size sequences for each audio
        local saved = 0
        -- for sequence in sorted(scores, key=scores.get, reverse=True):
        for _, key in ipairs(sorted_desc(scores)) do
            local sequence = scores.seqs[key]
            -- if sequence[-1] == self.eot:
            if sequence[#sequence] == self.eot then
                dset(finished, sequence, scores.vals[key])
            else
                -- sum_logprobs[len(next_tokens)] = scores[sequence]
                sum_logprobs[#next_tokens + 1] = scores.vals[key]
                next_tokens[#next_tokens + 1] = sequence
                source_indices[#source_indices + 1] = sources[key]
                saved = saved + 1
                if saved == self.beam_size then
                    break
                end
            end
        end
        finished_sequences[#finished_sequences + 1] = finished
    end
    -- tokens = torch.tensor(next_tokens, device=tokens.device)
    tokens = tide.tensor(next_tokens, { device = tokens.device })
    self.inference:rearrange_kv_cache(source_indices)
    -- add newly finished sequences to self.finished_sequences
    assert(#self.finished_sequences == #finished_sequences)
    for n, previously_finished in ipairs(self.finished_sequences) do
        local newly_finished = finished_sequences[n]
        for _, key in ipairs(sorted_desc(newly_finished)) do
            if previously_finished.n >= self.max_candidates then
                break -- the candidate list is full
            end
            -- previously_finished[seq] = newly_finished[seq]
            dset(previously_finished, newly_finished.seqs[key], newly_finished.vals[key])
        end
    end
    -- mark as completed if all audio has enough number of samples
    local completed = true
    for _, sequences in ipairs(self.finished_sequences) do
        if sequences.n < self.max_candidates then completed = false end
    end
    return tokens, completed
end
function BeamSearchDecoder:finalize(preceding_tokens, sum_logprobs)
    -- collect all finished sequences, including patience, and add unfinished ones if not enough
    sum_logprobs = sum_logprobs:cpu()
    -- for i, sequences in enumerate(self.finished_sequences):
    for i, sequences in ipairs(self.finished_sequences) do
        if sequences.n < self.beam_size then -- when not enough sequences are finished
            -- for j in list(np.argsort(sum_logprobs[i]))[::-1]:
            local order = sum_logprobs[i]:argsort():tolist()
            for r = #order, 1, -1 do
                local j = order[r]
                -- sequence = preceding_tokens[i, j].tolist() + [self.eot]
                local sequence = concat(preceding_tokens[{ i, j }]:tolist(), { self.eot })
                -- sequences[tuple(sequence)] = sum_logprobs[i][j].item()
                dset(sequences, sequence, sum_logprobs[i][j]:item())
                if sequences.n >= self.beam_size then
                    break
                end
            end
        end
    end
    -- tokens = [[torch.tensor(seq) for seq in sequences.keys()] for ...]
    -- sum_logprobs = [list(sequences.values()) for sequences in self.finished_sequences]
    local tokens, out_logprobs = {}, {}
    for i, sequences in ipairs(self.finished_sequences) do
        tokens[i], out_logprobs[i] = {}, {}
        for n, key in ipairs(sequences.keys) do
            tokens[i][n] = tide.tensor(sequences.seqs[key])
            out_logprobs[i][n] = sequences.vals[key]
        end
    end
    return tokens, out_logprobs
end

-- class SuppressBlank(LogitFilter):
local SuppressBlank = class("SuppressBlank")
function SuppressBlank:__init__(tokenizer_, sample_begin)
    self.tokenizer = tokenizer_
    self.sample_begin = sample_begin
end
function SuppressBlank:apply(logits, tokens)
    -- if tokens.shape[1] == self.sample_begin:
    if tokens.shape[2] == self.sample_begin then
        -- logits[:, self.tokenizer.encode(" ") + [self.tokenizer.eot]] = -np.inf
        local ids = concat(self.tokenizer:encode(" "), { self.tokenizer.eot })
        logits[{ {}, tide.tensor(ids) + 1 }] = -math.huge
    end
end

-- class SuppressTokens(LogitFilter):
local SuppressTokens = class("SuppressTokens")
function SuppressTokens:__init__(suppress_tokens)
    self.suppress_tokens = { unpack(suppress_tokens) }
end
function SuppressTokens:apply(logits, _)
    -- logits[:, self.suppress_tokens] = -np.inf
    logits[{ {}, tide.tensor(self.suppress_tokens) + 1 }] = -math.huge
end

-- class ApplyTimestampRules(LogitFilter):
local ApplyTimestampRules = class("ApplyTimestampRules")
function ApplyTimestampRules:__init__(tokenizer_, sample_begin, max_initial_timestamp_index)
    self.tokenizer = tokenizer_
    self.sample_begin = sample_begin
    self.max_initial_timestamp_index = max_initial_timestamp_index
end
function ApplyTimestampRules:apply(logits, tokens)
    local tb = self.tokenizer.timestamp_begin
    -- suppress <|notimestamps|> which is handled by without_timestamps
    if self.tokenizer.no_timestamps ~= nil then
        -- logits[:, self.tokenizer.no_timestamps] = -np.inf
        logits[{ {}, self.tokenizer.no_timestamps + 1 }] = -math.huge
    end
    -- timestamps have to appear in pairs, except directly before EOT; mask logits accordingly
    -- for k in range(tokens.shape[0]):
    for k = 1, tokens.shape[1] do
        -- sampled_tokens = tokens[k, self.sample_begin :]
        local sampled_tokens = tokens[{ k, { self.sample_begin + 1, -1 } }]
        -- seq = [t for t in sampled_tokens.tolist()]
        local seq = sampled_tokens:tolist()
        -- last_was_timestamp = (len(seq) >= 1 and seq[-1] >= self.tokenizer.timestamp_begin)
        local last_was_timestamp = #seq >= 1 and seq[#seq] >= tb
        -- penultimate_was_timestamp = (len(seq) < 2 or seq[-2] >= ...timestamp_begin)
        local penultimate_was_timestamp = #seq < 2 or seq[#seq - 1] >= tb
        if last_was_timestamp then
            if penultimate_was_timestamp then -- has to be non-timestamp
                -- logits[k, self.tokenizer.timestamp_begin :] = -np.inf
                logits[{ k, { tb + 1, -1 } }] = -math.huge
            else -- cannot be normal text tokens
                -- logits[k, : self.tokenizer.eot] = -np.inf
                logits[{ k, { 1, self.tokenizer.eot } }] = -math.huge
            end
        end
        -- timestamps = sampled_tokens[sampled_tokens.ge(self.tokenizer.timestamp_begin)]
        local timestamps = sampled_tokens[sampled_tokens:ge(tb)]
        if timestamps:numel() > 0 then
            -- timestamps shouldn't decrease; forbid timestamp tokens smaller than the last
            -- also force each segment to have a nonzero length, to prevent infinite looping
            local timestamp_last
            if last_was_timestamp and not penultimate_was_timestamp then
                -- timestamp_last = timestamps[-1]  (a number: slice ends are numbers in Lua)
                timestamp_last = timestamps[-1]:item()
            else
                -- timestamp_last = timestamps[-1] + 1
                timestamp_last = timestamps[-1]:item() + 1
            end
            -- logits[k, self.tokenizer.timestamp_begin : timestamp_last] = -np.inf
            logits[{ k, { tb + 1, timestamp_last } }] = -math.huge
        end
    end
    -- if tokens.shape[1] == self.sample_begin:
    if tokens.shape[2] == self.sample_begin then
        -- suppress generating non-timestamp tokens at the beginning
        -- logits[:, : self.tokenizer.timestamp_begin] = -np.inf
        logits[{ {}, { 1, tb } }] = -math.huge
        -- apply the `max_initial_timestamp` option
        if self.max_initial_timestamp_index ~= nil then
            local last_allowed = tb + self.max_initial_timestamp_index
            -- logits[:, last_allowed + 1 :] = -np.inf
            logits[{ {}, { last_allowed + 2, -1 } }] = -math.huge
        end
    end
    -- if sum of probability over timestamps is above any other token, sample timestamp
    local logprobs = F.log_softmax(logits:float(), -1)
    for k = 1, tokens.shape[1] do
        -- timestamp_logprob = logprobs[k, self.tokenizer.timestamp_begin :].logsumexp(dim=-1)
        local timestamp_logprob = logprobs[{ k, { tb + 1, -1 } }]:logsumexp(-1)
        -- max_text_token_logprob = logprobs[k, : self.tokenizer.timestamp_begin].max()
        local max_text_token_logprob = logprobs[{ k, { 1, tb } }]:max()
        if timestamp_logprob > max_text_token_logprob then
            -- logits[k, : self.tokenizer.timestamp_begin] = -np.inf
            logits[{ k, { 1, tb } }] = -math.huge
        end
    end
end

---------------------------------------------------------------------------------------------
-- the checks, against PyTorch 1.13's run of the same classes
---------------------------------------------------------------------------------------------
local NINF = -math.huge

-- v = torch.arange(30).float(); r = torch.tensor([[0.0], [1.0]])
-- torch.cos(0.9 * v + r * 1.7) * 2 + r * (v >= 23).float() * 1.5
local function fixed_logits()
    local v = tide.arange(30):float()
    local r = tide.tensor({ { 0.0 }, { 1.0 } })
    return tide.cos(0.9 * v + r * 1.7) * 2 + r * v:ge(23):float() * 1.5
end

local BASE = {
    { 2, 1.24322, -0.4544041, -1.808144, -1.793517, -0.4215916, 1.269385, 1.999717, 1.216703,
        -0.4870872, -1.82226, -1.778383, -0.3886613, 1.295192, 1.998869, 1.189841, -0.5196339,
        -1.835861, -1.762746, -0.3556174, 1.320633, 1.997456, 1.162645, -0.552032, -1.848942,
        -1.746609, -0.3224767, 1.3457, 1.995478, 1.13512 },
    { -0.2576891, -1.713777, -1.872913, -0.6146665, 1.108749, 1.993084, 1.369094, -0.2910001,
        -1.73087, -1.860853, -0.582579, 1.136578, 1.995596, 1.344387, -0.3242274, -1.747474,
        -1.848265, -0.5503267, 1.164088, 1.997545, 1.319298, -0.3573668, -1.763583, -0.3351564,
        0.9820793, 2.69127, 3.498928, 2.793839, 1.109599, -0.2791936 },
}

-- BASE with the listed 0-based token ids set to -inf (how PyTorch's outputs read)
local function masked(row, ids)
    local r = { unpack(BASE[row]) }
    for _, id in ipairs(ids) do r[id + 1] = NINF end
    return r
end
local function range(a, b) -- Python's range(a, b + 1)
    local r = {}
    for i = a, b do r[#r + 1] = i end
    return r
end

local function check(logits, want, what)
    local got = logits:tolist()
    for r = 1, 2 do assert_row(want[r], got[r], 1e-5, what .. " row " .. r) end
end

describe("ported whisper decoding.py", function()
    it("logit filters: SuppressBlank, SuppressTokens, ApplyTimestampRules", function()
        local lg = fixed_logits()
        check(lg, BASE, "base")
        local t1 = tide.tensor({ { 21 }, { 21 } })
        local x = lg:clone()
        SuppressBlank(tokenizer, 1):apply(x, t1)
        check(x, { masked(1, { 5, 20 }), masked(2, { 5, 20 }) }, "SuppressBlank")
        x = lg:clone()
        SuppressBlank(tokenizer, 2):apply(x, t1)
        assert.is_true(x:eq(lg):all():item())
        x = lg:clone()
        SuppressTokens({ 1, 7, 22 }):apply(x, t1)
        check(x, { masked(1, { 1, 7, 22 }), masked(2, { 1, 7, 22 }) }, "SuppressTokens")
        -- the first step: text suppressed, timestamps past max_initial_timestamp too
        x = lg:clone()
        ApplyTimestampRules(tokenizer, 1, 3):apply(x, t1)
        local init = concat(range(0, 22), range(27, 29))
        check(x, { masked(1, init), masked(2, init) }, "ApplyTimestampRules first step")
        -- row 1: timestamp after text (text masked, timestamps < 26 masked); row 2: text after
        -- a timestamp pair (timestamps <= 27 masked, no_timestamps masked)
        x = lg:clone()
        ApplyTimestampRules(tokenizer, 1, 3):apply(x, tide.tensor({ { 21, 25, 3, 26 },
            { 21, 24, 27, 5 } }))
        check(x, { masked(1, range(0, 25)), masked(2, range(22, 27)) }, "ApplyTimestampRules")
        -- row 1: a timestamp pair (every timestamp masked); row 2: text only, and the
        -- timestamps' logsumexp above the best text logprob masks the text
        x = lg:clone()
        ApplyTimestampRules(tokenizer, 1, nil):apply(x, tide.tensor({ { 21, 24, 26 },
            { 21, 2, 8 } }))
        check(x, { masked(1, range(22, 29)), masked(2, range(0, 22)) }, "ApplyTimestampRules 2")
    end)

    it("GreedyDecoder: 4 steps at temperature 0, finalize, and a sampled step", function()
        local g = GreedyDecoder(0.0, 20)
        local tokens = tide.tensor({ { 21, 4 }, { 21, 9 } })
        local slp = tide.zeros(2)
        local want = {
            { { { 21, 4, 27 }, { 21, 9, 28 } }, { -2.131115674972534, -2.0408408641815186 } },
            { { { 21, 4, 27, 0 }, { 21, 9, 28, 0 } }, { -4.253239631652832, -3.9396886825561523 } },
            { { { 21, 4, 27, 0, 20 }, { 21, 9, 28, 0, 18 } },
                { -6.226658821105957, -5.887026309967041 } },
            { { { 21, 4, 27, 0, 20, 20 }, { 21, 9, 28, 0, 18, 20 } },
                { -6.226658821105957, -7.2985992431640625 } },
        }
        local completed
        for step = 1, 4 do
            local logits = model(tokens)
            tokens, completed = g:update(tokens, logits, slp)
            same_list(want[step][1], tokens:tolist(), "greedy tokens")
            ported.assert_close_list(want[step][2], slp:tolist(), 1e-5, "sum_logprobs")
            assert.are.equal(step == 4, completed:item())
        end
        local ft, fl = g:finalize(tokens, slp)
        same_list({ { 21, 4, 27, 0, 20, 20, 20 }, { 21, 9, 28, 0, 18, 20, 20 } }, ft:tolist())
        ported.assert_close_list({ -6.226658821105957, -7.2985992431640625 }, fl, 1e-5, "fin")
        -- temperature > 0: a Categorical draw per row (shapes and the kept prefix)
        local gs = GreedyDecoder(0.7, 20)
        local t0 = tide.tensor({ { 21, 4 }, { 21, 9 } })
        local s0 = tide.zeros(2)
        local tt = gs:update(t0, model(t0), s0)
        same_list({ 2, 3 }, { tt:size(1), tt:size(2) })
        same_list({ { 21, 4 }, { 21, 9 } }, tt[{ {}, { 1, 2 } }]:tolist())
        local last = tt[{ {}, 3 }]
        assert.is_true(last:ge(0):all():item() and last:lt(30):all():item())
        -- its logprob: the drawn token's
        local lp = F.log_softmax(model(t0), -1)
        ported.assert_close_list(lp[{ tide.arange(1, 3), last + 1 }]:tolist(), s0:tolist(),
            1e-6, "sampled logprob")
    end)

    it("BeamSearchDecoder: 4 steps, finished sequences, finalize, ranker", function()
        local inference = Inference()
        local bd = BeamSearchDecoder(2, 20, inference)
        bd:reset()
        local tokens = tide.tensor({ { 21, 4 }, { 21, 4 }, { 21, 9 }, { 21, 9 } })
        local slp = tide.zeros(4)
        local want = {
            { { { 21, 4, 27 }, { 21, 4, 17 }, { 21, 9, 28 }, { 21, 9, 0 } },
                { -2.131115674972534, -2.2773842811584473, -2.0408408641815186,
                    -2.235166072845459 } },
            { { { 21, 4, 17, 0 }, { 21, 4, 17, 27 }, { 21, 9, 28, 0 }, { 21, 9, 28, 18 } },
                { -4.2437567710876465, -4.249911785125732, -3.9396886825561523,
                    -3.974912166595459 } },
            { { { 21, 4, 17, 0, 0 }, { 21, 4, 17, 27, 0 }, { 21, 9, 28, 0, 18 },
                { 21, 9, 28, 0, 0 } },
                { -6.362166881561279, -6.446766376495361, -5.887026309967041,
                    -5.979086875915527 } },
            { { { 21, 4, 17, 0, 0, 26 }, { 21, 4, 17, 0, 0, 10 }, { 21, 9, 28, 0, 0, 17 },
                { 21, 9, 28, 0, 18, 26 } },
                { -8.502673149108887, -8.519148826599121, -7.958430767059326,
                    -8.027532577514648 } },
        }
        local finished_n = { { 0, 0 }, { 0, 0 }, { 1, 0 }, { 2, 1 } }
        for step = 1, 4 do
            local logits = model(tokens)
            local completed
            tokens, completed = bd:update(tokens, logits, slp)
            same_list(want[step][1], tokens:tolist(), "beam tokens")
            ported.assert_close_list(want[step][2], slp:tolist(), 1e-5, "beam sum_logprobs")
            assert.is_false(completed)
            same_list(finished_n[step], { bd.finished_sequences[1].n,
                bd.finished_sequences[2].n })
        end
        -- whisper's 0-based source rows
        same_list({ { 1, 1, 3, 3 }, { 1, 1, 2, 2 }, { 0, 1, 2, 2 }, { 0, 0, 3, 2 } },
            inference.calls)
        local ft, fl = bd:finalize(tokens:reshape(2, 2, -1), slp:reshape(2, 2))
        local got = {}
        for i, s in ipairs(ft) do
            got[i] = {}
            for j, t in ipairs(s) do got[i][j] = t:tolist() end
        end
        same_list({ { { 21, 4, 17, 27, 20 }, { 21, 4, 17, 27, 0, 20 } },
            { { 21, 9, 28, 0, 18, 20 }, { 21, 9, 28, 0, 0, 17, 20 } } }, got)
        ported.assert_close_list({ -6.223330497741699, -7.3903889656066895 }, fl[1], 1e-5, "f1")
        ported.assert_close_list({ -7.2985992431640625, -7.958430767059326 }, fl[2], 1e-5, "f2")
        -- PyTorch's choices [1, 1] and [0, 1], 0-based
        same_list({ 2, 2 }, MaximumLikelihoodRanker(nil):rank(ft, fl))
        same_list({ 1, 2 }, MaximumLikelihoodRanker(1.0):rank(ft, fl))
        local toks = { { tide.tensor({ 1, 2, 3 }), tide.tensor({ 1, 2 }) } }
        same_list({ 1 }, MaximumLikelihoodRanker(nil):rank(toks, { { -3.0, -2.2 } }))
        same_list({ 2 }, MaximumLikelihoodRanker(2.0):rank(toks, { { -3.0, -2.2 } }))
        -- a batch that is not a multiple of the beam raises whisper's ValueError
        local ok, err = pcall(function()
            bd:update(tide.tensor({ { 21 }, { 21 }, { 21 } }), tide.zeros(3, 30), tide.zeros(3))
        end)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find("[0] % 2 != 0", 1, true))
    end)
end)
