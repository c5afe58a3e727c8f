-- ported_scripts134_spec.lua — kmkurn/pytorch-crf's torchcrf/__init__.py (version 0.7.2, HEAD
-- 623e340): the CRF module (reset_parameters, forward with reduction none/sum/mean/token_mean,
-- decode, _validate's ValueErrors, _compute_score, _compute_normalizer, _viterbi_decode),
-- ported line for line at tiny sizes (5 tags, 4 steps, batch 3, batch_first both ways), checked
-- against PyTorch 1.13 running the original module with the same parameters; then the brief's
-- BiLSTM-CRF tagger (the README's usage: Embedding 10 x 6, bidirectional LSTM hidden 4, Linear
-- to the tags, CRF) trained 3 SGD steps. 0.7.2's decode has no nbest (later forks add it).
-- The Python line stands above each Lua line that differs from it. Tags and the decoded tag
-- lists are 1-based (PyTorch's minus one).
local tide = require("tide")
local nn = tide.nn
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_close_list = ported.assert_close_list
local assert_finite = ported.assert_finite

---------------------------------------------------------------------------------------------
-- torchcrf/__init__.py
---------------------------------------------------------------------------------------------
-- Python's tuple (4, 3), as the f-strings of _validate print it
local function tuple2(a, b)
    return string.format("(%d, %d)", a, b)
end

-- class CRF(nn.Module):
local CRF = nn.Module:extend("CRF")

-- def __init__(self, num_tags: int, batch_first: bool = False) -> None:
function CRF:init(num_tags, batch_first)
    if num_tags <= 0 then
        -- raise ValueError(f'invalid number of tags: {num_tags}')
        error("invalid number of tags: " .. num_tags)
    end
    self.num_tags = num_tags
    self.batch_first = batch_first or false
    -- self.start_transitions = nn.Parameter(torch.empty(num_tags))
    self.start_transitions = nn.Parameter(tide.empty(num_tags))
    self.end_transitions = nn.Parameter(tide.empty(num_tags))
    self.transitions = nn.Parameter(tide.empty(num_tags, num_tags))

    self:reset_parameters()
end

function CRF:reset_parameters()
    -- nn.init.uniform_(self.start_transitions, -0.1, 0.1)
    nn.init.uniform_(self.start_transitions, -0.1, 0.1)
    nn.init.uniform_(self.end_transitions, -0.1, 0.1)
    nn.init.uniform_(self.transitions, -0.1, 0.1)
end

-- def __repr__(self) -> str:
function CRF:__tostring()
    -- return f'{self.__class__.__name__}(num_tags={self.num_tags})'
    return string.format("%s(num_tags=%d)", self.__name, self.num_tags)
end

-- def forward(self, emissions, tags, mask=None, reduction='sum'):
function CRF:forward(emissions, tags, mask, reduction)
    reduction = reduction or "sum"
    -- self._validate(emissions, tags=tags, mask=mask)
    self:_validate(emissions, tags, mask)
    -- if reduction not in ('none', 'sum', 'mean', 'token_mean'):
    if reduction ~= "none" and reduction ~= "sum" and reduction ~= "mean"
        and reduction ~= "token_mean" then
        -- raise ValueError(f'invalid reduction: {reduction}')
        error("invalid reduction: " .. tostring(reduction))
    end
    if mask == nil then
        -- mask = torch.ones_like(tags, dtype=torch.uint8)
        mask = tide.ones_like(tags, { dtype = "uint8" })
    end

    if self.batch_first then
        -- emissions = emissions.transpose(0, 1)
        emissions = emissions:transpose(1, 2)
        tags = tags:transpose(1, 2)
        mask = mask:transpose(1, 2)
    end

    -- shape: (batch_size,)
    local numerator = self:_compute_score(emissions, tags, mask)
    -- shape: (batch_size,)
    local denominator = self:_compute_normalizer(emissions, mask)
    -- shape: (batch_size,)
    local llh = numerator - denominator

    if reduction == "none" then
        return llh
    end
    if reduction == "sum" then
        return llh:sum()
    end
    if reduction == "mean" then
        return llh:mean()
    end
    assert(reduction == "token_mean")
    -- return llh.sum() / mask.type_as(emissions).sum()
    return llh:sum() / mask:type_as(emissions):sum()
end

-- def decode(self, emissions, mask=None) -> List[List[int]]:
function CRF:decode(emissions, mask)
    -- self._validate(emissions, mask=mask)
    self:_validate(emissions, nil, mask)
    if mask == nil then
        -- mask = emissions.new_ones(emissions.shape[:2], dtype=torch.uint8)
        mask = emissions:new_ones(emissions.shape[{ { 1, 2 } }], { dtype = "uint8" })
    end

    if self.batch_first then
        emissions = emissions:transpose(1, 2)
        mask = mask:transpose(1, 2)
    end

    return self:_viterbi_decode(emissions, mask)
end

-- def _validate(self, emissions, tags=None, mask=None) -> None:
function CRF:_validate(emissions, tags, mask)
    if emissions:dim() ~= 3 then
        -- raise ValueError(f'emissions must have dimension of 3, got {emissions.dim()}')
        error("emissions must have dimension of 3, got " .. emissions:dim())
    end
    -- if emissions.size(2) != self.num_tags:
    if emissions:size(3) ~= self.num_tags then
        -- raise ValueError(f'expected last dimension of emissions is {self.num_tags}, '
        --                  f'got {emissions.size(2)}')
        error(string.format("expected last dimension of emissions is %d, got %d",
            self.num_tags, emissions:size(3)))
    end

    if tags ~= nil then
        -- if emissions.shape[:2] != tags.shape:
        if emissions.shape[{ { 1, 2 } }] ~= tags.shape then
            error("the first two dimensions of emissions and tags must match, got " ..
                tuple2(emissions.shape[1], emissions.shape[2]) .. " and " ..
                tuple2(tags.shape[1], tags.shape[2]))
        end
    end

    if mask ~= nil then
        if emissions.shape[{ { 1, 2 } }] ~= mask.shape then
            error("the first two dimensions of emissions and mask must match, got " ..
                tuple2(emissions.shape[1], emissions.shape[2]) .. " and " ..
                tuple2(mask.shape[1], mask.shape[2]))
        end
        -- no_empty_seq = not self.batch_first and mask[0].all()
        -- (Lua's 0 is true: a tensor's truth is its item() ~= 0)
        local no_empty_seq = not self.batch_first and mask[1]:all():item() ~= 0
        -- no_empty_seq_bf = self.batch_first and mask[:, 0].all()
        local no_empty_seq_bf = self.batch_first and mask[{ {}, 1 }]:all():item() ~= 0
        if not no_empty_seq and not no_empty_seq_bf then
            error("mask of the first timestep must all be on")
        end
    end
end

-- def _compute_score(self, emissions, tags, mask) -> torch.Tensor:
function CRF:_compute_score(emissions, tags, mask)
    -- emissions: (seq_length, batch_size, num_tags)
    -- tags: (seq_length, batch_size)
    -- mask: (seq_length, batch_size)
    assert(emissions:dim() == 3 and tags:dim() == 2)
    assert(emissions.shape[{ { 1, 2 } }] == tags.shape)
    assert(emissions:size(3) == self.num_tags)
    assert(mask.shape == tags.shape)
    assert(mask[1]:all():item() ~= 0)

    -- seq_length, batch_size = tags.shape
    local seq_length, batch_size = tags.shape[1], tags.shape[2]
    mask = mask:type_as(emissions)
    local batch = tide.arange(1, batch_size + 1) -- torch.arange(batch_size), 1-based

    -- Start transition score and first emission
    -- shape: (batch_size,)
    -- score = self.start_transitions[tags[0]]
    local score = self.start_transitions[tags[1]]
    -- score += emissions[0, torch.arange(batch_size), tags[0]]
    score = score + emissions[{ 1, batch, tags[1] }]

    -- for i in range(1, seq_length):
    for i = 2, seq_length do
        -- Transition score to next tag, only added if next timestep is valid (mask == 1)
        -- score += self.transitions[tags[i - 1], tags[i]] * mask[i]
        score = score + self.transitions[{ tags[i - 1], tags[i] }] * mask[i]

        -- Emission score for next tag, only added if next timestep is valid (mask == 1)
        -- score += emissions[i, torch.arange(batch_size), tags[i]] * mask[i]
        score = score + emissions[{ i, batch, tags[i] }] * mask[i]
    end

    -- End transition score
    -- seq_ends = mask.long().sum(dim=0) - 1   (1-based here: the count is the last index)
    local seq_ends = mask:long():sum(1)
    -- last_tags = tags[seq_ends, torch.arange(batch_size)]
    local last_tags = tags[{ seq_ends, batch }]
    -- score += self.end_transitions[last_tags]
    score = score + self.end_transitions[last_tags]

    return score
end

-- def _compute_normalizer(self, emissions, mask) -> torch.Tensor:
function CRF:_compute_normalizer(emissions, mask)
    assert(emissions:dim() == 3 and mask:dim() == 2)
    assert(emissions.shape[{ { 1, 2 } }] == mask.shape)
    assert(emissions:size(3) == self.num_tags)
    assert(mask[1]:all():item() ~= 0)

    -- seq_length = emissions.size(0)
    local seq_length = emissions:size(1)

    -- Start transition score and first emission
    -- shape: (batch_size, num_tags)
    -- score = self.start_transitions + emissions[0]
    local score = self.start_transitions + emissions[1]

    for i = 2, seq_length do
        -- Broadcast score for every possible next tag
        -- shape: (batch_size, num_tags, 1)
        -- broadcast_score = score.unsqueeze(2)
        local broadcast_score = score:unsqueeze(3)

        -- Broadcast emission score for every possible current tag
        -- shape: (batch_size, 1, num_tags)
        -- broadcast_emissions = emissions[i].unsqueeze(1)
        local broadcast_emissions = emissions[i]:unsqueeze(2)

        -- shape: (batch_size, num_tags, num_tags)
        local next_score = broadcast_score + self.transitions + broadcast_emissions

        -- Sum over all possible current tags, in log space
        -- next_score = torch.logsumexp(next_score, dim=1)
        next_score = tide.logsumexp(next_score, 2)

        -- Set score to the next score if this timestep is valid (mask == 1)
        -- score = torch.where(mask[i].unsqueeze(1), next_score, score)
        -- (a uint8 mask: PyTorch 1.13's deprecated byte condition, with its warning once)
        score = tide.where(mask[i]:unsqueeze(2), next_score, score)
    end

    -- End transition score
    -- score += self.end_transitions
    score = score + self.end_transitions

    -- Sum (log-sum-exp) over all possible tags
    -- return torch.logsumexp(score, dim=1)
    return tide.logsumexp(score, 2)
end

-- def _viterbi_decode(self, emissions, mask) -> List[List[int]]:
function CRF:_viterbi_decode(emissions, mask)
    assert(emissions:dim() == 3 and mask:dim() == 2)
    assert(emissions.shape[{ { 1, 2 } }] == mask.shape)
    assert(emissions:size(3) == self.num_tags)
    assert(mask[1]:all():item() ~= 0)

    -- seq_length, batch_size = mask.shape
    local seq_length, batch_size = mask.shape[1], mask.shape[2]

    -- Start transition and first emission
    -- shape: (batch_size, num_tags)
    local score = self.start_transitions + emissions[1]
    -- history: List[torch.Tensor] = []
    local history = {}

    for i = 2, seq_length do
        -- shape: (batch_size, num_tags, 1)
        local broadcast_score = score:unsqueeze(3)
        -- shape: (batch_size, 1, num_tags)
        local broadcast_emission = emissions[i]:unsqueeze(2)
        -- shape: (batch_size, num_tags, num_tags)
        local next_score = broadcast_score + self.transitions + broadcast_emission

        -- Find the maximum score over all possible current tag
        -- next_score, indices = next_score.max(dim=1)
        local indices
        next_score, indices = next_score:max(2)

        -- score = torch.where(mask[i].unsqueeze(1), next_score, score)
        score = tide.where(mask[i]:unsqueeze(2), next_score, score)
        -- history.append(indices)
        history[#history + 1] = indices
    end

    -- End transition score
    score = score + self.end_transitions

    -- Now, compute the best path for each sample

    -- seq_ends = mask.long().sum(dim=0) - 1   (the 0-based last index: as many history steps)
    local seq_ends = mask:long():sum(1) - 1
    local best_tags_list = {}

    -- for idx in range(batch_size):
    for idx = 1, batch_size do
        -- _, best_last_tag = score[idx].max(dim=0)
        local _, best_last_tag = score[idx]:max(1)
        local best_tags = {}
        -- best_tags.append(best_last_tag.item())
        best_tags[#best_tags + 1] = best_last_tag:item()

        -- for hist in history[:seq_ends[idx]][::-1]:
        for h = seq_ends[idx]:item(), 1, -1 do
            local hist = history[h]
            -- best_last_tag = hist[idx][best_tags[-1]]
            best_last_tag = hist[idx][best_tags[#best_tags]]
            best_tags[#best_tags + 1] = best_last_tag:item()
        end

        -- best_tags.reverse()
        local n = #best_tags
        for k = 1, math.floor(n / 2) do
            best_tags[k], best_tags[n + 1 - k] = best_tags[n + 1 - k], best_tags[k]
        end
        best_tags_list[#best_tags_list + 1] = best_tags
    end

    return best_tags_list
end

---------------------------------------------------------------------------------------------
-- the check: PyTorch 1.13 ran torchcrf 0.7.2 with these parameters and inputs
---------------------------------------------------------------------------------------------
local T, S, B = 5, 4, 3

-- start[j] = 0.1 sin(j + 1), end[j] = 0.1 cos(j + 1), trans[j, k] = 0.3 sin(1.3 (5j + k) + 0.7),
-- j and k 0-based as in the Python script
local function set_params(crf)
    tide.no_grad(function()
        for j = 0, T - 1 do
            crf.start_transitions[j + 1] = 0.1 * math.sin(j + 1)
            crf.end_transitions[j + 1] = 0.1 * math.cos(j + 1)
            for k = 0, T - 1 do
                crf.transitions[{ j + 1, k + 1 }] = 0.3 * math.sin(1.3 * (j * T + k) + 0.7)
            end
        end
    end)
end

-- emissions (seq, batch, tags): 1.5 sin(0.37 n + 0.2) at the flat 0-based position n
local function emissions_data()
    local e = {}
    for s = 0, S - 1 do
        e[s + 1] = {}
        for b = 0, B - 1 do
            e[s + 1][b + 1] = {}
            for k = 0, T - 1 do
                e[s + 1][b + 1][k + 1] = 1.5 * math.sin(0.37 * ((s * B + b) * T + k) + 0.2)
            end
        end
    end
    return e
end

-- tags (s * 3 + b * 2) % 5 (0-based in Python, plus one here); lengths 4, 2, 3
local function tags_and_mask()
    local tags, mask, lens = {}, {}, { 4, 2, 3 }
    for s = 0, S - 1 do
        tags[s + 1], mask[s + 1] = {}, {}
        for b = 0, B - 1 do
            tags[s + 1][b + 1] = (s * 3 + b * 2) % T + 1
            mask[s + 1][b + 1] = s < lens[b + 1] and 1 or 0
        end
    end
    return tide.tensor(tags, { dtype = "int64" }), tide.tensor(mask, { dtype = "uint8" })
end

local function flat(t)
    return t:detach():contiguous():view(-1):totable()
end

local WANT = {
    nomask = {
        none = { -7.271799088, -6.658747673, -7.140059471 },
        sum = { -21.07060623 }, mean = { -7.023535252 }, token_mean = { -1.755883813 },
    },
    mask = {
        none = { -7.271799088, -2.882216454, -4.527827263 },
        sum = { -14.6818428 }, mean = { -4.893947601 }, token_mean = { -1.631315827 },
    },
    -- PyTorch's [[4, 4, 4, 4], [0, 1, 1, 4], [0, 0, 0, 0]] and [[4, 4, 4, 4], [0, 1], [0, 0, 0]]
    decode = { { 5, 5, 5, 5 }, { 1, 2, 2, 5 }, { 1, 1, 1, 1 } },
    decode_mask = { { 5, 5, 5, 5 }, { 1, 2 }, { 1, 1, 1 } },
    gtrans = { -0.5078803301, -0.3835744858, -0.2046351731, 0.8627768755, -0.1738724262,
        -0.3644148409, -0.2705855966, -0.1568187773, -0.1311872005, 0.7939500809, 1.748518348,
        -0.1853360683, -0.1217109039, -0.1285109818, -0.2389540523, -0.2327617109,
        0.8339998126, -0.1211471036, -0.1541310847, -0.3224398494, -0.3352284431,
        -0.2241303325, 0.8274565935, -0.2485815585, -0.5608007908 },
    gem = { 0.9088568091, -0.155360654, -0.2193985283, -0.2606170177, -0.273480773,
        -0.405804038, -0.2902365327, 0.8334463835, -0.08775939792, -0.04964628071,
        -0.2756884396, -0.2023820132, -0.1634405404, -0.1587589383, 0.8002701998,
        -0.07229087502, -0.111389637, -0.1395146549, 0.7806005478, -0.4574055374,
        0.6768351793, -0.303840667, -0.1735101044, -0.1064474508, -0.09303683043,
        -0.4661129713, -0.2590290308, 0.8836903572, -0.07399916649, -0.0845489502,
        -0.09614601731, 0.8893414736, -0.1207766533, -0.1959458888, -0.4764731526,
        0, 0, 0, 0, 0,
        0.4981651902, -0.2827156186, -0.1105471924, -0.0556362085, -0.04926598445,
        -0.2322175205, -0.1619932055, -0.1161971241, -0.1482057571, 0.6586134434,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
    gstart = { 0.2273643017, -0.6479791999, 0.4506072998, -0.5071353912, 0.4771431088 },
    gend = { 0.9427827597, -0.7485495806, -0.4002544284, -0.3102893829, 0.5163106918 },
}

describe("ported_scripts134: kmkurn/pytorch-crf torchcrf (CRF 0.7.2)", function()
    it("builds its three transition parameters, uniform in [-0.1, 0.1]", function()
        tide.manual_seed(0)
        local crf = CRF(T)
        local names = {}
        for _, np in ipairs(crf:named_parameters()) do
            names[#names + 1] = np[1]
        end
        table.sort(names)
        assert.are.same({ "end_transitions", "start_transitions", "transitions" }, names)
        assert.are.same({ T, T }, crf.transitions.shape)
        assert.are.same({ T }, crf.start_transitions.shape)
        for _, p in ipairs({ crf.start_transitions, crf.end_transitions, crf.transitions }) do
            assert.is_true(p.requires_grad)
            assert.is_true(p:abs():max():item() <= 0.1)
            assert.is_true(p:abs():max():item() > 0) -- filled, not left empty
        end
        assert.are.equal("CRF(num_tags=5)", tostring(crf))
        assert.is_false(crf.batch_first)
    end)

    for _, bf in ipairs({ false, true }) do
        local label = bf and "batch_first" or "seq first"
        it("log likelihood, decode and gradients match PyTorch 1.13 (" .. label .. ")", function()
            local crf = CRF(T, bf)
            set_params(crf)
            local e = tide.tensor(emissions_data(), { requires_grad = true })
            local tags, mask = tags_and_mask()
            -- ee, tt, mm = (e.transpose(0, 1), tags.t(), mask.t()) if bf else (e, tags, mask)
            local ee, tt, mm = e, tags, mask
            if bf then
                ee, tt, mm = e:transpose(1, 2), tags:t(), mask:t()
            end
            for _, red in ipairs({ "none", "sum", "mean", "token_mean" }) do
                local a = crf(ee, tt, nil, red)
                assert.are.same(red == "none" and { B } or {}, a.shape)
                assert_close_list(WANT.nomask[red], flat(a), 1e-5, red .. " without a mask")
                local b = crf(ee, tt, mm, red)
                assert_close_list(WANT.mask[red], flat(b), 1e-5, red .. " with a mask")
            end
            -- a bool mask reads as the uint8 one
            assert_close_list(WANT.mask.none, flat(crf(ee, tt, mm:bool(), "none")), 1e-5,
                "bool mask")
            assert.are.same(WANT.decode, crf:decode(ee:detach()))
            assert.are.same(WANT.decode_mask, crf:decode(ee:detach(), mm))
            -- llh = crf(ee, tt, mm); llh.backward()
            local llh = crf(ee, tt, mm)
            llh:backward()
            assert_close_list(WANT.gtrans, flat(crf.transitions.grad), 1e-4, "d/dtransitions")
            assert_close_list(WANT.gem, flat(e.grad), 1e-4, "d/demissions")
            assert_close_list(WANT.gstart, flat(crf.start_transitions.grad), 1e-4, "d/dstart")
            assert_close_list(WANT.gend, flat(crf.end_transitions.grad), 1e-4, "d/dend")
        end)
    end

    it("raises _validate's ValueErrors with their text", function()
        local crf = CRF(T)
        set_params(crf)
        local em = tide.tensor(emissions_data())
        local tags, mask = tags_and_mask()
        local function raises(msg, f)
            local ok, err = pcall(f)
            assert.is_false(ok)
            assert.are.equal(msg, (tostring(err):gsub("^[^:]*:%d+: ", "")))
        end
        raises("emissions must have dimension of 3, got 2", function() crf:decode(em[1]) end)
        raises("expected last dimension of emissions is 5, got 3", function()
            crf:decode(em[{ {}, {}, { 1, 3 } }])
        end)
        raises("the first two dimensions of emissions and tags must match, got (4, 3) and " ..
            "(3, 3)", function() crf(em, tags[{ { 1, 3 } }]) end)
        raises("the first two dimensions of emissions and mask must match, got (4, 3) and " ..
            "(4, 2)", function() crf(em, tags, mask[{ {}, { 1, 2 } }]) end)
        raises("mask of the first timestep must all be on", function() crf(em, tags, 1 - mask) end)
        raises("invalid reduction: avg", function() crf(em, tags, nil, "avg") end)
        raises("invalid number of tags: 0", function() CRF(0) end)
    end)

    -- the brief's tagger, pytorch-crf's README usage:
    -- class BiLSTM_CRF(nn.Module):
    --     def __init__(self):
    --         self.embedding = nn.Embedding(10, 6)
    --         self.lstm = nn.LSTM(6, 4, batch_first=True, bidirectional=True)
    --         self.hidden2tag = nn.Linear(8, 5)
    --         self.crf = CRF(5, batch_first=True)
    --     def forward(self, words, tags, mask):
    --         out, _ = self.lstm(self.embedding(words))
    --         return -self.crf(self.hidden2tag(out), tags, mask, reduction='mean')
    it("a BiLSTM-CRF tagger's negative log likelihood falls over 3 SGD steps", function()
        tide.manual_seed(134)
        local BiLSTM_CRF = nn.Module:extend("BiLSTM_CRF")
        function BiLSTM_CRF:init()
            self.embedding = nn.Embedding(10, 6)
            self.lstm = nn.LSTM(6, 4, { batch_first = true, bidirectional = true })
            self.hidden2tag = nn.Linear(8, T)
            self.crf = CRF(T, true)
        end
        function BiLSTM_CRF:forward(words, tags, mask)
            local out = self.lstm(self.embedding(words))
            return -self.crf(self.hidden2tag(out), tags, mask, "mean")
        end
        local model = BiLSTM_CRF()
        -- words (batch 3, seq 4) in 1..10, tags in 1..5, lengths 4, 2, 3
        local words = tide.tensor({ { 1, 4, 7, 10 }, { 2, 5, 1, 1 }, { 3, 6, 9, 1 } },
            { dtype = "int64" })
        local tags = tide.tensor({ { 1, 2, 3, 4 }, { 5, 1, 1, 1 }, { 2, 3, 4, 1 } },
            { dtype = "int64" })
        local mask = tide.tensor({ { 1, 1, 1, 1 }, { 1, 1, 0, 0 }, { 1, 1, 1, 0 } },
            { dtype = "uint8" })
        local opt = optim.SGD(model:parameters(), { lr = 0.5 })
        local losses = {}
        for step = 1, 3 do
            opt:zero_grad()
            local loss = model(words, tags, mask)
            assert.are.same({}, loss.shape)
            loss:backward()
            opt:step()
            losses[step] = loss:item()
            assert_finite(losses[step], "nll")
        end
        assert.is_true(losses[1] > 0)
        assert.is_true(losses[2] < losses[1] and losses[3] < losses[2],
            table.concat(losses, ", "))
        -- the transitions learned too
        assert.is_not_nil(model.crf.transitions.grad)
        assert.is_true(model.crf.transitions.grad:abs():sum():item() > 0)
        -- decode returns each sequence's length of tags in 1..5
        local out = model.lstm(model.embedding(words))
        local paths = model.crf:decode(model.hidden2tag(out), mask)
        assert.are.same({ 4, 2, 3 }, { #paths[1], #paths[2], #paths[3] })
        for _, p in ipairs(paths) do
            for _, t in ipairs(p) do
                assert.is_true(t >= 1 and t <= T)
            end
        end
    end)
end)
