-- ported_scripts152_spec.lua — huggingface/transformers v4.46.3
-- src/transformers/generation/logits_process.py: LogitsProcessorList, MinLengthLogitsProcessor,
-- MinNewTokensLengthLogitsProcessor, TemperatureLogitsWarper, RepetitionPenaltyLogitsProcessor,
-- TopPLogitsWarper, TopKLogitsWarper, TypicalLogitsWarper, EpsilonLogitsWarper, EtaLogitsWarper,
-- NoRepeatNGramLogitsProcessor (_get_ngrams, _get_generated_ngrams, _calc_banned_ngram_tokens),
-- ForcedBOSTokenLogitsProcessor, ForcedEOSTokenLogitsProcessor, InfNanRemoveLogitsProcessor,
-- ExponentialDecayLengthPenalty, SuppressTokensLogitsProcessor,
-- SuppressTokensAtBeginLogitsProcessor, ported line for line, then a greedy and a top-k/top-p
-- sampling loop of 5 steps (utils.py's _sample, its core) over a tiny fixed "model".
-- The Python line stands above each Lua line that differs from it.
-- Token ids: every token id here (input_ids, eos_token_id, bos_token_id, suppress_tokens) is a
-- 1-based vocab position, PyTorch's id + 1, so it indexes scores as it is; torch.arange(V) of
-- the vocab becomes tide.arange(1, V + 1). The PyTorch values below were computed with 0-based
-- ids (/tmp script: the same classes on the same formulas), each id one less.
-- NoBadWordsLogitsProcessor (through SequenceBiasLogitsProcessor, ~200 lines) is not ported.
local tide = require("tide")
local F = tide.nn.functional

local ported = require("spec.support.ported")
local class = ported.class

local INF = math.huge

---------------------------------------------------------------------------------------------
-- logits_process.py
---------------------------------------------------------------------------------------------
-- Python's `if not isinstance(eos_token_id, torch.Tensor): ... torch.tensor(eos_token_id)`
local function id_tensor(ids)
    if tide.is_tensor(ids) then
        return ids
    end
    if type(ids) == "number" then
        ids = { ids }
    end
    return tide.tensor(ids, { dtype = "int64" })
end

-- class LogitsProcessorList(list):
local LogitsProcessorList = class("LogitsProcessorList")
function LogitsProcessorList:__init__(processors)
    for i, p in ipairs(processors or {}) do
        self[i] = p
    end
end
-- def __call__(self, input_ids, scores, **kwargs):
function LogitsProcessorList:__call__(input_ids, scores, kwargs)
    kwargs = kwargs or {}
    -- for processor in self:
    for _, processor in ipairs(self) do
        -- function_args = inspect.signature(processor.__call__).parameters
        -- GAP: Lua has no signature to inspect: a processor lists its extra arguments'
        -- names in extra_args (Python's parameters past input_ids and scores)
        local function_args = processor.extra_args or {}
        -- if len(function_args) > 2:
        if #function_args > 0 then
            for _, arg in ipairs(function_args) do
                if kwargs[arg] == nil then
                    error("Make sure that all the required parameters: " ..
                        table.concat(function_args, ", ") .. " for " .. processor.__name ..
                        " are passed to the logits processor.")
                end
            end
            scores = processor(input_ids, scores, kwargs)
        else
            scores = processor(input_ids, scores)
        end
    end
    return scores
end

-- class MinLengthLogitsProcessor(LogitsProcessor):
local MinLengthLogitsProcessor = class("MinLengthLogitsProcessor")
function MinLengthLogitsProcessor:__init__(min_length, eos_token_id)
    -- if not isinstance(min_length, int) or min_length < 0:
    if type(min_length) ~= "number" or min_length % 1 ~= 0 or min_length < 0 then
        error("`min_length` has to be a non-negative integer, but is " .. tostring(min_length))
    end
    self.min_length = min_length
    self.eos_token_id = id_tensor(eos_token_id)
end
function MinLengthLogitsProcessor:__call__(input_ids, scores)
    -- vocab_tensor = torch.arange(scores.shape[-1], device=scores.device)
    local vocab_tensor = tide.arange(1, scores.shape[scores.ndim] + 1) -- 1-based ids
    -- eos_token_mask = isin_mps_friendly(vocab_tensor, self.eos_token_id)
    local eos_token_mask = tide.isin(vocab_tensor, self.eos_token_id)
    local scores_processed = scores:clone()
    -- if input_ids.shape[-1] < self.min_length:
    if input_ids:size(-1) < self.min_length then
        -- scores_processed = torch.where(eos_token_mask, -math.inf, scores)
        scores_processed = tide.where(eos_token_mask, -INF, scores)
    end
    return scores_processed
end

-- class MinNewTokensLengthLogitsProcessor(LogitsProcessor):
local MinNewTokensLengthLogitsProcessor = class("MinNewTokensLengthLogitsProcessor")
function MinNewTokensLengthLogitsProcessor:__init__(prompt_length_to_skip, min_new_tokens,
                                                    eos_token_id)
    for _, a in ipairs({ { "prompt_length_to_skip", prompt_length_to_skip },
        { "min_new_tokens", min_new_tokens } }) do
        if a[2] % 1 ~= 0 or a[2] < 0 then
            error("`" .. a[1] .. "` has to be a positive integer, but is " .. tostring(a[2]))
        end
    end
    self.prompt_length_to_skip = prompt_length_to_skip
    self.min_new_tokens = min_new_tokens
    self.eos_token_id = id_tensor(eos_token_id)
end
function MinNewTokensLengthLogitsProcessor:__call__(input_ids, scores)
    -- new_tokens_length = input_ids.shape[-1] - self.prompt_length_to_skip
    local new_tokens_length = input_ids:size(-1) - self.prompt_length_to_skip
    local scores_processed = scores:clone()
    -- vocab_tensor = torch.arange(scores.shape[-1], device=scores.device)
    local vocab_tensor = tide.arange(1, scores:size(-1) + 1)
    local eos_token_mask = tide.isin(vocab_tensor, self.eos_token_id)
    if new_tokens_length < self.min_new_tokens then
        scores_processed = tide.where(eos_token_mask, -INF, scores)
    end
    return scores_processed
end

-- class TemperatureLogitsWarper(LogitsProcessor):
local TemperatureLogitsWarper = class("TemperatureLogitsWarper")
function TemperatureLogitsWarper:__init__(temperature)
    -- if not isinstance(temperature, float) or not (temperature > 0):
    if type(temperature) ~= "number" or not (temperature > 0) then
        local except_msg = "`temperature` (=" .. tostring(temperature) .. ") has to be a " ..
            "strictly positive float, otherwise your next token scores will be invalid."
        if temperature == 0 then
            except_msg = except_msg ..
                " If you're looking for greedy decoding strategies, set `do_sample=False`."
        end
        error(except_msg)
    end
    self.temperature = temperature
end
function TemperatureLogitsWarper:__call__(_, scores)
    local scores_processed = scores / self.temperature
    return scores_processed
end

-- class RepetitionPenaltyLogitsProcessor(LogitsProcessor):
local RepetitionPenaltyLogitsProcessor = class("RepetitionPenaltyLogitsProcessor")
function RepetitionPenaltyLogitsProcessor:__init__(penalty)
    if type(penalty) ~= "number" or not (penalty > 0) then
        error("`penalty` has to be a strictly positive float, but is " .. tostring(penalty))
    end
    self.penalty = penalty
end
function RepetitionPenaltyLogitsProcessor:__call__(input_ids, scores)
    -- score = torch.gather(scores, 1, input_ids)
    local score = tide.gather(scores, 2, input_ids)
    -- if score < 0 then repetition penalty has to be multiplied to reduce the token probabilities
    -- score = torch.where(score < 0, score * self.penalty, score / self.penalty)
    score = tide.where(score:lt(0), score * self.penalty, score / self.penalty)
    -- scores_processed = scores.scatter(1, input_ids, score)
    local scores_processed = scores:scatter(2, input_ids, score)
    return scores_processed
end

-- class TopPLogitsWarper(LogitsProcessor):
local TopPLogitsWarper = class("TopPLogitsWarper")
-- def __init__(self, top_p: float, filter_value: float = -float("Inf"), min_tokens_to_keep=1):
function TopPLogitsWarper:__init__(top_p, filter_value, min_tokens_to_keep)
    filter_value, min_tokens_to_keep = filter_value or -INF, min_tokens_to_keep or 1
    if top_p < 0 or top_p > 1.0 then
        error("`top_p` has to be a float > 0 and < 1, but is " .. tostring(top_p))
    end
    if min_tokens_to_keep % 1 ~= 0 or min_tokens_to_keep < 1 then
        error("`min_tokens_to_keep` has to be a positive integer, but is " ..
            tostring(min_tokens_to_keep))
    end
    self.top_p = top_p
    self.filter_value = filter_value
    self.min_tokens_to_keep = min_tokens_to_keep
end
function TopPLogitsWarper:__call__(_, scores)
    -- sorted_logits, sorted_indices = torch.sort(scores, descending=False)
    local sorted_logits, sorted_indices = tide.sort(scores, { descending = false })
    -- cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    local cumulative_probs = sorted_logits:softmax(-1):cumsum(-1)
    -- Remove tokens with cumulative top_p above the threshold (token with 0 are kept)
    -- sorted_indices_to_remove = cumulative_probs <= (1 - self.top_p)
    local sorted_indices_to_remove = cumulative_probs:le(1 - self.top_p)
    -- Keep at least min_tokens_to_keep
    -- sorted_indices_to_remove[..., -self.min_tokens_to_keep :] = 0
    sorted_indices_to_remove[{ "...", { -self.min_tokens_to_keep, -1 } }] = 0
    -- scatter sorted tensors to original indexing
    -- indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices,
    --     sorted_indices_to_remove)
    local indices_to_remove = sorted_indices_to_remove:scatter(2, sorted_indices,
        sorted_indices_to_remove)
    -- scores_processed = scores.masked_fill(indices_to_remove, self.filter_value)
    local scores_processed = scores:masked_fill(indices_to_remove, self.filter_value)
    return scores_processed
end

-- class TopKLogitsWarper(LogitsProcessor):
local TopKLogitsWarper = class("TopKLogitsWarper")
function TopKLogitsWarper:__init__(top_k, filter_value, min_tokens_to_keep)
    filter_value, min_tokens_to_keep = filter_value or -INF, min_tokens_to_keep or 1
    if type(top_k) ~= "number" or top_k % 1 ~= 0 or top_k <= 0 then
        error("`top_k` has to be a strictly positive integer, but is " .. tostring(top_k))
    end
    self.top_k = math.max(top_k, min_tokens_to_keep)
    self.filter_value = filter_value
end
function TopKLogitsWarper:__call__(_, scores)
    local top_k = math.min(self.top_k, scores:size(-1)) -- Safety check
    -- Remove all tokens with a probability less than the last token of the top-k
    -- indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
    local indices_to_remove = scores:lt(tide.topk(scores, top_k)[{ "...", -1, tide.newaxis }])
    local scores_processed = scores:masked_fill(indices_to_remove, self.filter_value)
    return scores_processed
end

-- class TypicalLogitsWarper(LogitsProcessor):
local TypicalLogitsWarper = class("TypicalLogitsWarper")
function TypicalLogitsWarper:__init__(mass, filter_value, min_tokens_to_keep)
    mass, filter_value, min_tokens_to_keep = mass or 0.9, filter_value or -INF,
        min_tokens_to_keep or 1
    if not (mass > 0 and mass < 1) then
        error("`typical_p` has to be a float > 0 and < 1, but is " .. tostring(mass))
    end
    if min_tokens_to_keep % 1 ~= 0 or min_tokens_to_keep < 1 then
        error("`min_tokens_to_keep` has to be a positive integer, but is " ..
            tostring(min_tokens_to_keep))
    end
    self.filter_value = filter_value
    self.mass = mass
    self.min_tokens_to_keep = min_tokens_to_keep
end
function TypicalLogitsWarper:__call__(_, scores)
    -- calculate entropy
    -- normalized = torch.nn.functional.log_softmax(scores, dim=-1)
    local normalized = F.log_softmax(scores, -1)
    local p = tide.exp(normalized)
    -- ent = -(normalized * p).nansum(-1, keepdim=True)
    local ent = -(normalized * p):nansum(-1, true)
    -- shift and sort
    -- shifted_scores = torch.abs((-normalized) - ent)
    local shifted_scores = tide.abs((-normalized) - ent)
    local sorted_scores, sorted_indices = tide.sort(shifted_scores, { descending = false })
    -- sorted_logits = scores.gather(-1, sorted_indices)
    local sorted_logits = scores:gather(-1, sorted_indices)
    local cumulative_probs = sorted_logits:softmax(-1):cumsum(-1)
    -- Remove tokens with cumulative mass above the threshold
    -- last_ind = (cumulative_probs < self.mass).sum(dim=1)
    local last_ind = cumulative_probs:lt(self.mass):sum(2)
    -- last_ind.clamp_(max=sorted_scores.shape[-1] - 1)
    last_ind:clamp_(nil, sorted_scores:size(-1) - 1)
    -- sorted_indices_to_remove = sorted_scores > sorted_scores.gather(1, last_ind.view(-1, 1))
    -- (last_ind is a 0-based position: + 1 where it indexes)
    local sorted_indices_to_remove = sorted_scores:gt(
        sorted_scores:gather(2, (last_ind + 1):view(-1, 1)))
    -- sorted_indices_to_remove[..., : self.min_tokens_to_keep] = 0
    sorted_indices_to_remove[{ "...", { 1, self.min_tokens_to_keep } }] = 0
    local indices_to_remove = sorted_indices_to_remove:scatter(2, sorted_indices,
        sorted_indices_to_remove)
    local scores_processed = scores:masked_fill(indices_to_remove, self.filter_value)
    return scores_processed
end

-- class EpsilonLogitsWarper(LogitsProcessor):
local EpsilonLogitsWarper = class("EpsilonLogitsWarper")
function EpsilonLogitsWarper:__init__(epsilon, filter_value, min_tokens_to_keep)
    filter_value, min_tokens_to_keep = filter_value or -INF, min_tokens_to_keep or 1
    if epsilon <= 0 or epsilon >= 1 then
        error("`epsilon_cutoff` has to be a float > 0 and < 1, but is " .. tostring(epsilon))
    end
    -- min_tokens_to_keep = int(min_tokens_to_keep)
    min_tokens_to_keep = math.floor(min_tokens_to_keep)
    if min_tokens_to_keep < 1 then
        error("`min_tokens_to_keep` has to be a strictly positive integer, but is " ..
            tostring(min_tokens_to_keep))
    end
    self.epsilon = epsilon
    self.filter_value = filter_value
    self.min_tokens_to_keep = min_tokens_to_keep
end
function EpsilonLogitsWarper:__call__(_, scores)
    -- Determine which indices to remove
    local probabilities = scores:softmax(-1)
    -- indices_to_remove = probabilities < self.epsilon
    local indices_to_remove = probabilities:lt(self.epsilon)
    -- Keep the words with the 'min_tokens_to_keep'-highest probabilities
    local top_k = math.min(self.min_tokens_to_keep, scores:size(-1)) -- Safety check
    -- indices_to_remove = indices_to_remove & (scores <
    --     torch.topk(scores, top_k)[0][..., -1, None])
    indices_to_remove = indices_to_remove:logical_and(
        scores:lt(tide.topk(scores, top_k)[{ "...", -1, tide.newaxis }]))
    local scores_processed = scores:masked_fill(indices_to_remove, self.filter_value)
    return scores_processed
end

-- class EtaLogitsWarper(LogitsProcessor):
local EtaLogitsWarper = class("EtaLogitsWarper")
function EtaLogitsWarper:__init__(epsilon, filter_value, min_tokens_to_keep)
    filter_value, min_tokens_to_keep = filter_value or -INF, min_tokens_to_keep or 1
    if epsilon <= 0 or epsilon >= 1 then
        error("`eta_cutoff` has to be a float > 0 and < 1, but is " .. tostring(epsilon))
    end
    min_tokens_to_keep = math.floor(min_tokens_to_keep)
    if min_tokens_to_keep < 1 then
        error("`min_tokens_to_keep` has to be a strictly positive integer, but is " ..
            tostring(min_tokens_to_keep))
    end
    -- self.epsilon = torch.tensor(epsilon, device=device)
    self.epsilon = tide.tensor(epsilon)
    self.filter_value = filter_value
    self.min_tokens_to_keep = min_tokens_to_keep
end
function EtaLogitsWarper:__call__(_, scores)
    local probabilities = scores:softmax(-1)
    -- entropy = torch.distributions.Categorical(logits=scores).entropy()
    local entropy = tide.distributions.Categorical({ logits = scores }):entropy()
    -- eta = torch.min(self.epsilon, torch.sqrt(self.epsilon) * torch.exp(-entropy))[..., None]
    local eta = tide.min(self.epsilon, tide.sqrt(self.epsilon) * tide.exp(-entropy))[
        { "...", tide.newaxis }]
    -- indices_to_remove = probabilities < eta
    local indices_to_remove = probabilities:lt(eta)
    local top_k = math.min(self.min_tokens_to_keep, scores:size(-1)) -- Safety check
    indices_to_remove = indices_to_remove:logical_and(
        scores:lt(tide.topk(scores, top_k)[{ "...", -1, tide.newaxis }]))
    local scores_processed = scores:masked_fill(indices_to_remove, self.filter_value)
    return scores_processed
end

-- def _get_ngrams(ngram_size: int, prev_input_ids: torch.Tensor, num_hypos: int):
-- (Python's tuple keys are strings here: the ids joined by ",")
local function _get_ngrams(ngram_size, prev_input_ids, num_hypos)
    -- generated_ngrams = [{} for _ in range(num_hypos)]
    local generated_ngrams = {}
    for idx = 1, num_hypos do
        generated_ngrams[idx] = {}
    end
    for idx = 1, num_hypos do
        -- gen_tokens = prev_input_ids[idx].tolist()
        local gen_tokens = prev_input_ids[idx]:tolist()
        local generated_ngram = generated_ngrams[idx]
        -- for ngram in zip(*[gen_tokens[i:] for i in range(ngram_size)]):
        for s = 1, #gen_tokens - ngram_size + 1 do
            local ngram = {}
            for k = 0, ngram_size - 1 do
                ngram[#ngram + 1] = gen_tokens[s + k]
            end
            -- prev_ngram_tuple = tuple(ngram[:-1])
            local prev_ngram_tuple = table.concat(ngram, ",", 1, ngram_size - 1)
            -- generated_ngram[prev_ngram_tuple] = generated_ngram.get(prev_ngram_tuple, [])
            --     + [ngram[-1]]
            local list = generated_ngram[prev_ngram_tuple] or {}
            list[#list + 1] = ngram[ngram_size]
            generated_ngram[prev_ngram_tuple] = list
        end
    end
    return generated_ngrams
end

-- def _get_generated_ngrams(banned_ngrams, prev_input_ids, ngram_size, cur_len):
local function _get_generated_ngrams(banned_ngrams, prev_input_ids, ngram_size, cur_len)
    -- Before decoding the next token, prevent decoding of ngrams that have already appeared
    -- start_idx = cur_len + 1 - ngram_size
    local start_idx = cur_len + 1 - ngram_size
    -- ngram_idx = tuple(prev_input_ids[start_idx:cur_len].tolist())
    -- (Python's [start_idx, cur_len) is 1-based start_idx + 1 .. cur_len, empty for size 1)
    local ngram_idx = table.concat(prev_input_ids[{ { start_idx + 1, cur_len } }]:tolist(), ",")
    -- return banned_ngrams.get(ngram_idx, [])
    return banned_ngrams[ngram_idx] or {}
end

-- def _calc_banned_ngram_tokens(ngram_size, prev_input_ids, num_hypos, cur_len):
local function _calc_banned_ngram_tokens(ngram_size, prev_input_ids, num_hypos, cur_len)
    -- if cur_len + 1 < ngram_size:
    if cur_len + 1 < ngram_size then
        -- return no banned tokens if we haven't generated no_repeat_ngram_size tokens yet
        local none = {}
        for h = 1, num_hypos do
            none[h] = {}
        end
        return none
    end
    local generated_ngrams = _get_ngrams(ngram_size, prev_input_ids, num_hypos)
    local banned_tokens = {}
    for hypo_idx = 1, num_hypos do
        banned_tokens[hypo_idx] = _get_generated_ngrams(generated_ngrams[hypo_idx],
            prev_input_ids[hypo_idx], ngram_size, cur_len)
    end
    return banned_tokens
end

-- class NoRepeatNGramLogitsProcessor(LogitsProcessor):
local NoRepeatNGramLogitsProcessor = class("NoRepeatNGramLogitsProcessor")
function NoRepeatNGramLogitsProcessor:__init__(ngram_size)
    if type(ngram_size) ~= "number" or ngram_size % 1 ~= 0 or ngram_size <= 0 then
        error("`ngram_size` has to be a strictly positive integer, but is " ..
            tostring(ngram_size))
    end
    self.ngram_size = ngram_size
end
function NoRepeatNGramLogitsProcessor:__call__(input_ids, scores)
    local num_batch_hypotheses = scores:size(1)
    local cur_len = input_ids:size(-1)
    local scores_processed = scores:clone()
    local banned_batch_tokens = _calc_banned_ngram_tokens(self.ngram_size, input_ids,
        num_batch_hypotheses, cur_len)
    -- for i, banned_tokens in enumerate(banned_batch_tokens):
    for i, banned_tokens in ipairs(banned_batch_tokens) do
        -- scores_processed[i, banned_tokens] = -float("inf")
        scores_processed[{ i, tide.tensor(banned_tokens, { dtype = "int64" }) }] = -INF
    end
    return scores_processed
end

-- class ForcedBOSTokenLogitsProcessor(LogitsProcessor):
local ForcedBOSTokenLogitsProcessor = class("ForcedBOSTokenLogitsProcessor")
function ForcedBOSTokenLogitsProcessor:__init__(bos_token_id)
    self.bos_token_id = bos_token_id
end
function ForcedBOSTokenLogitsProcessor:__call__(input_ids, scores)
    local cur_len = input_ids:size(-1)
    local scores_processed = scores
    if cur_len == 1 then
        -- scores_processed = torch.full_like(scores, -math.inf)
        scores_processed = tide.full_like(scores, -INF)
        -- scores_processed[:, self.bos_token_id] = 0
        scores_processed[{ {}, self.bos_token_id }] = 0
    end
    return scores_processed
end

-- class ForcedEOSTokenLogitsProcessor(LogitsProcessor):
local ForcedEOSTokenLogitsProcessor = class("ForcedEOSTokenLogitsProcessor")
function ForcedEOSTokenLogitsProcessor:__init__(max_length, eos_token_id)
    self.max_length = max_length
    self.eos_token_id = id_tensor(eos_token_id)
    -- if torch.is_floating_point(eos_token_id) or (eos_token_id < 0).any():
    -- (1-based ids: an id below 1 is PyTorch's negative one)
    if tide.is_floating_point(self.eos_token_id) or self.eos_token_id:lt(1):any():item() then
        error("`eos_token_id` has to be a list of positive integers, but is " ..
            tostring(self.eos_token_id))
    end
end
function ForcedEOSTokenLogitsProcessor:__call__(input_ids, scores)
    local cur_len = input_ids:size(-1)
    local scores_processed = scores
    if cur_len == self.max_length - 1 then
        scores_processed = tide.full_like(scores, -INF)
        -- scores_processed[:, self.eos_token_id] = 0
        scores_processed[{ {}, self.eos_token_id }] = 0
    end
    return scores_processed
end

-- class InfNanRemoveLogitsProcessor(LogitsProcessor):
local InfNanRemoveLogitsProcessor = class("InfNanRemoveLogitsProcessor")
function InfNanRemoveLogitsProcessor:__call__(_, scores)
    -- set all nan values to 0.0
    -- scores_processed = torch.where(scores != scores, 0.0, scores)
    local scores_processed = tide.where(scores:ne(scores), 0.0, scores)
    -- set all +/-inf values to max/min possible value
    -- scores_processed = torch.where(scores == float("inf"), torch.finfo(scores.dtype).max,
    --     scores_processed)
    scores_processed = tide.where(scores:eq(INF), tide.finfo(scores.dtype).max, scores_processed)
    scores_processed = tide.where(scores:eq(-INF), tide.finfo(scores.dtype).min,
        scores_processed)
    return scores_processed
end

-- class ExponentialDecayLengthPenalty(LogitsProcessor):
local ExponentialDecayLengthPenalty = class("ExponentialDecayLengthPenalty")
function ExponentialDecayLengthPenalty:__init__(exponential_decay_length_penalty, eos_token_id,
                                                input_ids_seq_length)
    -- self.regulation_start = exponential_decay_length_penalty[0] + input_ids_seq_length
    self.regulation_start = exponential_decay_length_penalty[1] + input_ids_seq_length
    self.regulation_factor = exponential_decay_length_penalty[2]
    self.eos_token_id = id_tensor(eos_token_id)
    if tide.is_floating_point(self.eos_token_id) or self.eos_token_id:lt(1):any():item() then
        error("`eos_token_id` has to be a list of positive integers, but is " ..
            tostring(self.eos_token_id))
    end
end
function ExponentialDecayLengthPenalty:__call__(input_ids, scores)
    local cur_len = input_ids:size(-1)
    self.eos_token_id = self.eos_token_id:to(scores.device)
    local penalties = tide.zeros_like(scores)
    local scores_processed = scores
    if cur_len > self.regulation_start then
        local penalty_idx = cur_len - self.regulation_start
        -- To support negative logits we compute the penalty of the absolute value and add to
        -- the original logit
        -- penalty = torch.abs(scores[:, self.eos_token_id]) *
        --     (pow(self.regulation_factor, penalty_idx) - 1)
        local penalty = tide.abs(scores[{ {}, self.eos_token_id }]) *
            (self.regulation_factor ^ penalty_idx - 1)
        -- penalties[:, self.eos_token_id] = penalty
        penalties[{ {}, self.eos_token_id }] = penalty
        scores_processed = scores + penalties
    end
    return scores_processed
end

-- class SuppressTokensAtBeginLogitsProcessor(LogitsProcessor):
local SuppressTokensAtBeginLogitsProcessor = class("SuppressTokensAtBeginLogitsProcessor")
function SuppressTokensAtBeginLogitsProcessor:__init__(begin_suppress_tokens, begin_index)
    -- self.begin_suppress_tokens = torch.tensor(list(begin_suppress_tokens), device=device)
    self.begin_suppress_tokens = tide.tensor(begin_suppress_tokens, { dtype = "int64" })
    self.begin_index = begin_index
end
function SuppressTokensAtBeginLogitsProcessor:set_begin_index(begin_index)
    self.begin_index = begin_index
end
function SuppressTokensAtBeginLogitsProcessor:__call__(input_ids, scores)
    local vocab_tensor = tide.arange(1, scores:size(-1) + 1)
    local suppress_token_mask = tide.isin(vocab_tensor, self.begin_suppress_tokens)
    local scores_processed = scores
    if input_ids:size(-1) == self.begin_index then
        scores_processed = tide.where(suppress_token_mask, -INF, scores)
    end
    return scores_processed
end

-- class SuppressTokensLogitsProcessor(LogitsProcessor):
local SuppressTokensLogitsProcessor = class("SuppressTokensLogitsProcessor")
function SuppressTokensLogitsProcessor:__init__(suppress_tokens)
    self.suppress_tokens = tide.tensor(suppress_tokens, { dtype = "int64" })
end
function SuppressTokensLogitsProcessor:__call__(_, scores)
    local vocab_tensor = tide.arange(1, scores:size(-1) + 1)
    local suppress_token_mask = tide.isin(vocab_tensor, self.suppress_tokens)
    scores = tide.where(suppress_token_mask, -INF, scores)
    return scores
end

---------------------------------------------------------------------------------------------
-- the checks: PyTorch's values from the same classes (0-based ids there) on these formulas
---------------------------------------------------------------------------------------------
local B, V = 2, 10
-- scores = torch.sin(1.3 * v + 0.7 * b) * 2 + 0.1 * v   (b, v: 0-based arange columns)
local function fixed_scores()
    local b = tide.arange(B):float()[{ {}, tide.newaxis }]
    local v = tide.arange(V):float()[{ tide.newaxis, {} }]
    return tide.sin(1.3 * v + 0.7 * b) * 2 + 0.1 * v
end
-- ids = torch.tensor([[1, 3, 5, 1], [2, 7, 0, 2]]), + 1
local IDS = { { 2, 4, 6, 2 }, { 3, 8, 1, 3 } }

local WANT = {
    min_length = {
        {-INF, 2.027116, 1.231003, -1.075532, -1.36691, 0.93024, 2.597087, 1.338198, -0.855653,
         -INF},
        {-INF, 1.918595, -0.115491, -1.687382, -0.347754, 2.087336, 2.196974, -0.032957, -1.189105,
         -INF},
    },
    min_length_off = {
        {0.0, 2.027116, 1.231003, -1.075532, -1.36691, 0.93024, 2.597087, 1.338198, -0.855653,
         -0.623967},
        {1.288435, 1.918595, -0.115491, -1.687382, -0.347754, 2.087336, 2.196974, -0.032957,
         -1.189105, 0.568791},
    },
    min_new_tokens = {
        {0.0, 2.027116, 1.231003, -1.075532, -INF, 0.93024, 2.597087, 1.338198, -0.855653,
         -0.623967},
        {1.288435, 1.918595, -0.115491, -1.687382, -INF, 2.087336, 2.196974, -0.032957, -1.189105,
         0.568791},
    },
    temperature = {
        {0.0, 2.89588, 1.758576, -1.536475, -1.952728, 1.328914, 3.710124, 1.911711, -1.222361,
         -0.891382},
        {1.840622, 2.74085, -0.164988, -2.410546, -0.496791, 2.981908, 3.138535, -0.047081,
         -1.698722, 0.812558},
    },
    repetition = {
        {0.0, 1.351411, 1.231003, -1.613298, -1.36691, 0.62016, 2.597087, 1.338198, -0.855653,
         -0.623967},
        {0.858957, 1.918595, -0.173237, -1.687382, -0.347754, 2.087336, 2.196974, -0.049435,
         -1.189105, 0.568791},
    },
    top_p = {
        {-INF, 2.027116, 1.231003, -INF, -INF, -INF, 2.597087, 1.338198, -INF, -INF},
        {1.288435, 1.918595, -INF, -INF, -INF, 2.087336, 2.196974, -INF, -INF, -INF},
    },
    top_p_keep = {
        {-INF, 2.027116, -INF, -INF, -INF, -INF, 2.597087, 1.338198, -INF, -INF},
        {-INF, 1.918595, -INF, -INF, -INF, 2.087336, 2.196974, -INF, -INF, -INF},
    },
    top_k = {
        {-INF, 2.027116, -INF, -INF, -INF, -INF, 2.597087, 1.338198, -INF, -INF},
        {-INF, 1.918595, -INF, -INF, -INF, 2.087336, 2.196974, -INF, -INF, -INF},
    },
    typical = {
        {-INF, 2.027116, 1.231003, -INF, -INF, -INF, -INF, 1.338198, -INF, -INF},
        {1.288435, 1.918595, -INF, -INF, -INF, 2.087336, -INF, -INF, -INF, -INF},
    },
    epsilon = {
        {-INF, 2.027116, -INF, -INF, -INF, -INF, 2.597087, -INF, -INF, -INF},
        {-INF, 1.918595, -INF, -INF, -INF, 2.087336, 2.196974, -INF, -INF, -INF},
    },
    eta = {
        {-INF, 2.027116, -INF, -INF, -INF, -INF, 2.597087, -INF, -INF, -INF},
        {1.288435, 1.918595, -INF, -INF, -INF, 2.087336, 2.196974, -INF, -INF, -INF},
    },
    no_repeat = {
        {0.0, 2.027116, 1.231003, -INF, -1.36691, 0.93024, 2.597087, 1.338198, -0.855653,
         -0.623967},
        {1.288435, 1.918595, -0.115491, -1.687382, -0.347754, 2.087336, 2.196974, -INF, -1.189105,
         0.568791},
    },
    no_repeat3 = {
        {0.0, 2.027116, 1.231003, -1.075532, -1.36691, -INF, 2.597087, 1.338198, -0.855653,
         -0.623967},
        {1.288435, 1.918595, -INF, -1.687382, -0.347754, 2.087336, 2.196974, -0.032957, -1.189105,
         0.568791},
    },
    forced_bos = {
        {-INF, -INF, -INF, -INF, 0.0, -INF, -INF, -INF, -INF, -INF},
        {-INF, -INF, -INF, -INF, 0.0, -INF, -INF, -INF, -INF, -INF},
    },
    forced_eos = {
        {0.0, -INF, -INF, -INF, -INF, -INF, 0.0, -INF, -INF, -INF},
        {0.0, -INF, -INF, -INF, -INF, -INF, 0.0, -INF, -INF, -INF},
    },
    inf_nan = {
        {0.0, 0.0, 1.231003, -3.4028234663852886e+38, -1.36691, 0.93024, 2.597087, 1.338198,
         -0.855653, -0.623967},
        {1.288435, 1.918595, 3.4028234663852886e+38, -1.687382, -0.347754, 2.087336, 2.196974,
         -0.032957, -1.189105, 0.568791},
    },
    exp_decay = {
        {0.0, 2.027116, 1.231003, -1.075532, -1.36691, 0.93024, 2.597087, 1.338198, 0.213913,
         -0.623967},
        {2.89898, 1.918595, -0.115491, -1.687382, -0.347754, 2.087336, 2.196974, -0.032957,
         0.297276, 0.568791},
    },
    suppress = {
        {0.0, -INF, 1.231003, -1.075532, -1.36691, -INF, 2.597087, 1.338198, -0.855653, -0.623967},
        {1.288435, -INF, -0.115491, -1.687382, -0.347754, -INF, 2.196974, -0.032957, -1.189105,
         0.568791},
    },
    suppress_begin = {
        {0.0, 2.027116, -INF, -1.075532, -1.36691, 0.93024, 2.597087, -INF, -0.855653, -0.623967},
        {1.288435, 1.918595, -INF, -1.687382, -0.347754, 2.087336, 2.196974, -INF, -1.189105,
         0.568791},
    },
    suppress_begin_off = {
        {0.0, 2.027116, 1.231003, -1.075532, -1.36691, 0.93024, 2.597087, 1.338198, -0.855653,
         -0.623967},
        {1.288435, 1.918595, -0.115491, -1.687382, -0.347754, 2.087336, 2.196974, -0.032957,
         -1.189105, 0.568791},
    },
    list = {
        {-INF, 1.94915, 1.538754, -INF, -INF, -INF, 3.246358, 1.672747, -INF, -INF},
        {-INF, 2.398243, -INF, -INF, -INF, 2.609169, 2.746218, -INF, -INF, -INF},
    },
}

-- got (a tensor) equals PyTorch's nested list: infinities exactly, numbers to tol
local function assert_scores(want, got, what)
    got = got:tolist()
    assert(#got == #want, what .. ": rows")
    for r = 1, #want do
        assert(#got[r] == #want[r], what .. ": columns")
        for c = 1, #want[r] do
            local w, g = want[r][c], got[r][c]
            local ok = (w == g) or (w == w and math.abs(w) ~= INF and ported.close(g, w, 1e-5))
            assert(ok, string.format("%s[%d][%d]: %s, PyTorch %s", what, r, c, tostring(g),
                tostring(w)))
        end
    end
end

-- the tiny model: logits a fixed function of the last token, W[i, j] = 3 sin(1.7 i + 0.9 j)
local function make_model()
    local i = tide.arange(V):float()[{ {}, tide.newaxis }]
    local j = tide.arange(V):float()[{ tide.newaxis, {} }]
    local W = tide.sin(1.7 * i + 0.9 * j) * 3
    -- def model(input_ids): return W[input_ids[:, -1]]
    return function(input_ids)
        return W[input_ids[{ {}, -1 }]]
    end
end

describe("ported transformers logits_process.py", function()
    local scores, ids
    before_each(function()
        scores = fixed_scores()
        ids = tide.tensor(IDS, { dtype = "int64" })
    end)
    local function check(name, p, i, s)
        assert_scores(WANT[name], p(i or ids, (s or scores):clone()), name)
    end

    it("min length, min new tokens, temperature and repetition penalty match PyTorch", function()
        check("min_length", MinLengthLogitsProcessor(5, { 1, 10 }))
        check("min_length_off", MinLengthLogitsProcessor(3, 1))
        check("min_new_tokens", MinNewTokensLengthLogitsProcessor(2, 3, { 5 }))
        check("temperature", TemperatureLogitsWarper(0.7))
        check("repetition", RepetitionPenaltyLogitsProcessor(1.5))
        assert.has_error(function() TemperatureLogitsWarper(0) end,
            "`temperature` (=0) has to be a strictly positive float, otherwise your next token " ..
            "scores will be invalid. If you're looking for greedy decoding strategies, set " ..
            "`do_sample=False`.")
    end)

    it("top-p, top-k, typical, epsilon and eta warpers match PyTorch", function()
        check("top_p", TopPLogitsWarper(0.8))
        check("top_p_keep", TopPLogitsWarper(0.3, nil, 3))
        check("top_k", TopKLogitsWarper(3))
        check("typical", TypicalLogitsWarper(0.4))
        check("epsilon", EpsilonLogitsWarper(0.12))
        check("eta", EtaLogitsWarper(0.4))
    end)

    it("no-repeat n-grams, forced BOS/EOS, inf/nan removal, decay and suppression", function()
        check("no_repeat", NoRepeatNGramLogitsProcessor(2))
        check("no_repeat3", NoRepeatNGramLogitsProcessor(3),
            tide.tensor({ { 2, 4, 6, 2, 4 }, { 3, 3, 3, 3, 3 } }, { dtype = "int64" }))
        check("forced_bos", ForcedBOSTokenLogitsProcessor(5), ids[{ {}, { 1, 1 } }])
        check("forced_eos", ForcedEOSTokenLogitsProcessor(5, { 1, 7 }))
        local s2 = scores:clone()
        s2[{ 1, 2 }] = 0 / 0
        s2[{ 2, 3 }] = INF
        s2[{ 1, 4 }] = -INF
        check("inf_nan", InfNanRemoveLogitsProcessor(), ids, s2)
        check("exp_decay", ExponentialDecayLengthPenalty({ 1, 1.5 }, { 1, 9 }, 1))
        check("suppress", SuppressTokensLogitsProcessor({ 2, 6 }))
        check("suppress_begin", SuppressTokensAtBeginLogitsProcessor({ 3, 8 }, 4))
        check("suppress_begin_off", SuppressTokensAtBeginLogitsProcessor({ 3, 8 }, 3))
        assert.has_error(function() ForcedEOSTokenLogitsProcessor(5, { 0 }) end)
    end)

    it("a LogitsProcessorList applies its processors in order as PyTorch's", function()
        local lst = LogitsProcessorList({ MinLengthLogitsProcessor(5, 1),
            RepetitionPenaltyLogitsProcessor(1.3), TemperatureLogitsWarper(0.8),
            TopKLogitsWarper(5), TopPLogitsWarper(0.9) })
        check("list", lst)
        local needs = TemperatureLogitsWarper(1.0)
        needs.extra_args = { "cur_len" }
        assert.has_error(function() LogitsProcessorList({ needs })(ids, scores) end,
            "Make sure that all the required parameters: cur_len for " ..
            "TemperatureLogitsWarper are passed to the logits processor.")
    end)

    it("greedy decoding for 5 steps gives PyTorch's tokens", function()
        local model = make_model()
        local procs = LogitsProcessorList({ MinLengthLogitsProcessor(5, 1),
            RepetitionPenaltyLogitsProcessor(1.5), NoRepeatNGramLogitsProcessor(2),
            ForcedEOSTokenLogitsProcessor(9, 1) })
        -- x = torch.tensor([[3], [6]]); pad, eos = 0, 0   (ids + 1)
        local x = tide.tensor({ { 4 }, { 7 } }, { dtype = "int64" })
        local pad, eos = 1, 1
        -- unfinished = torch.ones(B, dtype=torch.long)
        local unfinished = tide.ones({ B }, { dtype = "int64" })
        for _ = 1, 5 do
            local nts = procs(x, model(x))
            local nt = tide.argmax(nts, -1)
            -- nt = nt * unfinished + pad * (1 - unfinished)
            nt = nt * unfinished + pad * (1 - unfinished)
            -- x = torch.cat([x, nt[:, None]], dim=-1)
            x = tide.cat({ x, nt[{ {}, tide.newaxis }] }, -1)
            -- unfinished = unfinished & ~(nt == eos)
            unfinished = unfinished:bitwise_and(nt:eq(eos):logical_not():long())
        end
        -- PyTorch: [[3, 3, 4, 8, 1, 0], [6, 4, 8, 1, 7, 9]], + 1
        assert.same({ { 4, 4, 5, 9, 2, 1 }, { 7, 5, 9, 2, 8, 10 } }, x:tolist())
        assert.same({ 0, 1 }, unfinished:tolist())
    end)

    it("top-k/top-p sampling for 5 steps draws only kept tokens, the same under a seed", function()
        local model = make_model()
        local warpers = LogitsProcessorList({ TemperatureLogitsWarper(0.9), TopKLogitsWarper(3),
            TopPLogitsWarper(0.8) })
        local function sample(seed)
            tide.manual_seed(seed)
            local x = tide.tensor({ { 4 }, { 7 } }, { dtype = "int64" })
            for _ = 1, 5 do
                local nts = warpers(x, model(x))
                -- probs = nn.functional.softmax(next_token_scores, dim=-1)
                local probs = F.softmax(nts, -1)
                -- next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)
                local nt = tide.multinomial(probs, 1):squeeze(2)
                local kept = nts:gather(2, nt[{ {}, tide.newaxis }]):tolist()
                for r = 1, B do
                    assert(kept[r][1] > -INF, "sampled a filtered token")
                end
                -- at most 3 tokens survive top-k
                assert.is_true(probs:gt(0):sum(2):le(3):all():item())
                x = tide.cat({ x, nt[{ {}, tide.newaxis }] }, -1)
            end
            return x:tolist()
        end
        local a = sample(7)
        assert.same({ 2, 6 }, { #a, #a[1] })
        assert.same(a, sample(7))
    end)
end)
