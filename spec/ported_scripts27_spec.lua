-- ported_scripts27_spec.lua — openai/CLIP's clip/model.py (the ViT CLIP: fp16-safe LayerNorm,
-- QuickGELU, ResidualAttentionBlock over nn.MultiheadAttention with an additive attn_mask,
-- VisionTransformer, encode_text's x[arange, text.argmax(-1)], logits, initialize_parameters,
-- convert_weights to half) and openai/whisper's whisper/model.py (LayerNorm/Linear/Conv1d that
-- cast to the input's dtype, sinusoids, MultiHeadAttention with a kv_cache filled by forward
-- hooks, AudioEncoder, TextDecoder, Whisper), ported line for line at tiny sizes. The Python line
-- stands above each Lua line that differs from it. CLIP's ModifiedResNet is not ported.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local function assert_finite(x)
    assert.is_true(x == x and x ~= math.huge and x ~= -math.huge, "not finite: " .. tostring(x))
end

local function max_abs_diff(a, b)
    return (a:float() - b:float()):abs():max():item()
end

---------------------------------------------------------------------------------------------
-- 1. openai/CLIP clip/model.py
---------------------------------------------------------------------------------------------
describe("openai/CLIP clip/model.py", function()
    -- class LayerNorm(nn.LayerNorm):
    local LayerNorm = nn.LayerNorm:extend("CLIPLayerNorm")
    function LayerNorm:forward(x)
        local orig_type = x.dtype
        -- ret = super().forward(x.type(torch.float32))
        local ret = nn.LayerNorm.forward(self, x:type(tide.float32))
        return ret:type(orig_type)
    end

    -- class QuickGELU(nn.Module):
    local QuickGELU = nn.Module:extend("QuickGELU")
    function QuickGELU:forward(x)
        return x * tide.sigmoid(1.702 * x)
    end

    -- class ResidualAttentionBlock(nn.Module):
    local ResidualAttentionBlock = nn.Module:extend("CLIPResidualAttentionBlock")
    function ResidualAttentionBlock:init(d_model, n_head, attn_mask)
        self.attn = nn.MultiheadAttention(d_model, n_head)
        self.ln_1 = LayerNorm(d_model)
        -- self.mlp = nn.Sequential(OrderedDict([("c_fc", ...), ("gelu", ...), ("c_proj", ...)]))
        self.mlp = nn.Sequential({
            { "c_fc", nn.Linear(d_model, d_model * 4) },
            { "gelu", QuickGELU() },
            { "c_proj", nn.Linear(d_model * 4, d_model) },
        })
        self.ln_2 = LayerNorm(d_model)
        self.attn_mask = attn_mask
    end

    function ResidualAttentionBlock:attention(x)
        -- self.attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if ... else None
        self.attn_mask = self.attn_mask and self.attn_mask:to({ dtype = x.dtype, device = x.device })
            or nil
        -- return self.attn(x, x, x, need_weights=False, attn_mask=self.attn_mask)[0]
        return (self.attn(x, x, x, { need_weights = false, attn_mask = self.attn_mask }))
    end

    function ResidualAttentionBlock:forward(x)
        x = x + self:attention(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x
    end

    -- class Transformer(nn.Module):
    local Transformer = nn.Module:extend("CLIPTransformer")
    function Transformer:init(width, layers, heads, attn_mask)
        self.width = width
        self.layers = layers
        -- nn.Sequential(*[ResidualAttentionBlock(width, heads, attn_mask) for _ in range(layers)])
        local blocks = {}
        for _ = 1, layers do
            blocks[#blocks + 1] = ResidualAttentionBlock(width, heads, attn_mask)
        end
        self.resblocks = nn.Sequential(unpack(blocks))
    end

    function Transformer:forward(x)
        return self.resblocks(x)
    end

    -- class VisionTransformer(nn.Module):
    local VisionTransformer = nn.Module:extend("VisionTransformer")
    function VisionTransformer:init(input_resolution, patch_size, width, layers, heads, output_dim)
        self.input_resolution = input_resolution
        self.output_dim = output_dim
        self.conv1 = nn.Conv2d({ in_channels = 3, out_channels = width, kernel_size = patch_size,
            stride = patch_size, bias = false })

        local scale = width ^ -0.5
        self.class_embedding = nn.Parameter(scale * tide.randn(width))
        -- (input_resolution // patch_size) ** 2 + 1
        self.positional_embedding = nn.Parameter(scale * tide.randn(
            math.floor(input_resolution / patch_size) ^ 2 + 1, width))
        self.ln_pre = LayerNorm(width)

        self.transformer = Transformer(width, layers, heads)

        self.ln_post = LayerNorm(width)
        self.proj = nn.Parameter(scale * tide.randn(width, output_dim))
    end

    function VisionTransformer:forward(x)
        x = self.conv1(x) -- shape = [*, width, grid, grid]
        x = x:reshape(x.shape[1], x.shape[2], -1) -- shape = [*, width, grid ** 2]
        -- x = x.permute(0, 2, 1)
        x = x:permute(1, 3, 2) -- shape = [*, grid ** 2, width]
        -- x = torch.cat([self.class_embedding.to(x.dtype) + torch.zeros(x.shape[0], 1, x.shape[-1],
        --     dtype=x.dtype, device=x.device), x], dim=1)
        x = tide.cat({ self.class_embedding:to(x.dtype) + tide.zeros(x.shape[1], 1, x.shape[-1],
            { dtype = x.dtype, device = x.device }), x }, { dim = 2 }) -- shape = [*, grid ** 2 + 1, width]
        x = x + self.positional_embedding:to(x.dtype)
        x = self.ln_pre(x)

        x = x:permute(2, 1, 3) -- NLD -> LND
        x = self.transformer(x)
        x = x:permute(2, 1, 3) -- LND -> NLD

        -- x = self.ln_post(x[:, 0, :])
        x = self.ln_post(x[{ {}, 1, {} }])

        if self.proj ~= nil then
            -- x = x @ self.proj
            x = x:matmul(self.proj)
        end

        return x
    end

    -- class CLIP(nn.Module):
    local CLIP = nn.Module:extend("CLIP")
    function CLIP:init(embed_dim, image_resolution, vision_layers, vision_width, vision_patch_size,
                       context_length, vocab_size, transformer_width, transformer_heads,
                       transformer_layers)
        self.context_length = context_length

        -- (the ModifiedResNet branch, vision_layers a tuple, is not ported)
        -- vision_heads = vision_width // 64  (64-wide heads; tiny here: 8-wide)
        local vision_heads = math.floor(vision_width / 8)
        -- self.visual = VisionTransformer(input_resolution=image_resolution, patch_size=vision_patch_size,
        --     width=vision_width, layers=vision_layers, heads=vision_heads, output_dim=embed_dim)
        -- GAP (Lua): a Lua class's init takes its arguments by position only
        self.visual = VisionTransformer(image_resolution, vision_patch_size, vision_width, vision_layers,
            vision_heads, embed_dim)

        -- self.transformer = Transformer(width=transformer_width, layers=transformer_layers,
        --     heads=transformer_heads, attn_mask=self.build_attention_mask())
        self.transformer = Transformer(transformer_width, transformer_layers, transformer_heads,
            self:build_attention_mask())

        self.vocab_size = vocab_size
        self.token_embedding = nn.Embedding(vocab_size, transformer_width)
        self.positional_embedding = nn.Parameter(tide.empty(self.context_length, transformer_width))
        self.ln_final = LayerNorm(transformer_width)

        self.text_projection = nn.Parameter(tide.empty(transformer_width, embed_dim))
        -- self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))
        self.logit_scale = nn.Parameter(tide.ones({}) * math.log(1 / 0.07))

        self:initialize_parameters()
    end

    function CLIP:initialize_parameters()
        -- nn.init.normal_(self.token_embedding.weight, std=0.02)
        nn.init.normal_(self.token_embedding.weight, { std = 0.02 })
        nn.init.normal_(self.positional_embedding, { std = 0.01 })

        local proj_std = (self.transformer.width ^ -0.5) * ((2 * self.transformer.layers) ^ -0.5)
        local attn_std = self.transformer.width ^ -0.5
        local fc_std = (2 * self.transformer.width) ^ -0.5
        -- for block in self.transformer.resblocks:
        for _, block in ipairs(self.transformer.resblocks) do
            nn.init.normal_(block.attn.in_proj_weight, { std = attn_std })
            nn.init.normal_(block.attn.out_proj.weight, { std = proj_std })
            nn.init.normal_(block.mlp.c_fc.weight, { std = fc_std })
            nn.init.normal_(block.mlp.c_proj.weight, { std = proj_std })
        end

        if self.text_projection ~= nil then
            nn.init.normal_(self.text_projection, { std = self.transformer.width ^ -0.5 })
        end
    end

    function CLIP:build_attention_mask()
        -- lazily create causal attention mask, with full attention between the vision tokens
        -- pytorch uses additive attention mask; fill with -inf
        local mask = tide.empty(self.context_length, self.context_length)
        -- mask.fill_(float("-inf"))
        mask:fill_(-math.huge)
        mask:triu_(1) -- zero out the lower diagonal
        return mask
    end

    -- @property def dtype(self): (a method here)
    function CLIP:dtype()
        return self.visual.conv1.weight.dtype
    end

    function CLIP:encode_image(image)
        return self.visual(image:type(self:dtype()))
    end

    function CLIP:encode_text(text)
        local x = self.token_embedding(text):type(self:dtype()) -- [batch_size, n_ctx, d_model]

        x = x + self.positional_embedding:type(self:dtype())
        x = x:permute(2, 1, 3) -- NLD -> LND
        x = self.transformer(x)
        x = x:permute(2, 1, 3) -- LND -> NLD
        x = self.ln_final(x):type(self:dtype())

        -- x.shape = [batch_size, n_ctx, transformer.width]
        -- take features from the eot embedding (eot_token is the highest number in each sequence)
        -- x = x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.text_projection
        x = x[{ tide.arange(1, x.shape[1] + 1), text:argmax({ dim = -1 }) }]:matmul(self.text_projection)

        return x
    end

    function CLIP:forward(image, text)
        local image_features = self:encode_image(image)
        local text_features = self:encode_text(text)

        -- normalized features
        -- image_features = image_features / image_features.norm(dim=1, keepdim=True)
        image_features = image_features / image_features:norm({ dim = 2, keepdim = true })
        text_features = text_features / text_features:norm({ dim = 2, keepdim = true })

        -- cosine similarity as logits
        local logit_scale = self.logit_scale:exp()
        -- logits_per_image = logit_scale * image_features @ text_features.t()
        local logits_per_image = (logit_scale * image_features):matmul(text_features:t())
        local logits_per_text = logits_per_image:t()

        -- shape = [global_batch_size, global_batch_size]
        return logits_per_image, logits_per_text
    end

    -- def convert_weights(model: nn.Module):
    local function convert_weights(model)
        local function _convert_weights_to_fp16(l)
            -- if isinstance(l, (nn.Conv1d, nn.Conv2d, nn.Linear)):
            if tide.isinstance(l, { nn.Conv1d, nn.Conv2d, nn.Linear }) then
                l.weight.data = l.weight.data:half()
                if l.bias ~= nil then
                    l.bias.data = l.bias.data:half()
                end
            end

            if tide.isinstance(l, nn.MultiheadAttention) then
                -- for attr in [*[f"{s}_proj_weight" for s in ["in", "q", "k", "v"]], "in_proj_bias", ...]:
                local attrs = {}
                for _, s in ipairs({ "in", "q", "k", "v" }) do
                    attrs[#attrs + 1] = s .. "_proj_weight"
                end
                attrs[#attrs + 1] = "in_proj_bias"
                attrs[#attrs + 1] = "bias_k"
                attrs[#attrs + 1] = "bias_v"
                for _, attr in ipairs(attrs) do
                    -- tensor = getattr(l, attr)
                    local tensor = l[attr]
                    if tensor ~= nil then
                        tensor.data = tensor.data:half()
                    end
                end
            end

            for _, name in ipairs({ "text_projection", "proj" }) do
                -- if hasattr(l, name):
                local attr = l[name]
                if attr ~= nil and tide.is_tensor(attr) then
                    attr.data = attr.data:half()
                end
            end
        end

        model:apply(_convert_weights_to_fp16)
    end

    local function tiny_clip()
        -- CLIP(embed_dim, image_resolution, vision_layers, vision_width, vision_patch_size,
        --      context_length, vocab_size, transformer_width, transformer_heads, transformer_layers)
        return CLIP(8, 8, 2, 16, 4, 6, 20, 16, 2, 2)
    end

    local function tiny_batch(n)
        local image = tide.randn(n, 3, 8, 8)
        -- 1-based token ids 1..20: the eot (the highest id, 20) at some place, padding 1 after it
        local text = tide.randint(2, 20, { n, 6 })
        for i = 1, n do
            local eot = 2 + (i % 4)
            text[{ i, eot }] = 20
            text[{ i, { eot + 1, 6 } }] = 1
        end
        return image, text
    end

    it("builds the ViT CLIP: shapes, the causal mask, symmetric logits, initialize_parameters", function()
        tide.manual_seed(0)
        local model = tiny_clip()
        -- build_attention_mask: -inf above the diagonal, 0 on and below
        local mask = model.transformer.resblocks[1].attn_mask
        assert.are.same({ 6, 6 }, mask.shape)
        assert.are.equal(-math.huge, mask[{ 1, 2 }]:item())
        assert.are.equal(0, mask[{ 2, 1 }]:item())
        assert.are.equal(0, mask[{ 3, 3 }]:item())
        -- the visual tower: (8 // 4) ** 2 + 1 positions
        assert.are.same({ 5, 16 }, model.visual.positional_embedding.shape)
        assert.are.equal(2, model.visual.transformer.resblocks[1].attn.num_heads)
        -- initialize_parameters' std=0.02 on the token embedding
        local std = model.token_embedding.weight:std():item()
        assert.is_true(std > 0.01 and std < 0.03, tostring(std))

        local image, text = tiny_batch(4)
        local image_features = model:encode_image(image)
        assert.are.same({ 4, 8 }, image_features.shape)
        local text_features = model:encode_text(text)
        assert.are.same({ 4, 8 }, text_features.shape)

        local logits_per_image, logits_per_text = model(image, text)
        assert.are.same({ 4, 4 }, logits_per_image.shape)
        assert.are.equal(0, max_abs_diff(logits_per_text, logits_per_image:t()))
        -- cosine similarity times exp(logit_scale) = 1 / 0.07: within +-1/0.07
        assert.is_true(logits_per_image:abs():max():item() <= 1 / 0.07 + 1e-4)

        -- the eot feature: row i of encode_text is the ln_final output at text[i].argmax()
        local x = model.token_embedding(text) + model.positional_embedding
        x = model.ln_final(model.transformer(x:permute(2, 1, 3)):permute(2, 1, 3))
        local idx = text:argmax({ dim = -1 })
        for i = 1, 4 do
            local row = x[{ i, idx[i]:item() }]:matmul(model.text_projection)
            assert.is_true(max_abs_diff(row, text_features[i]) < 1e-5)
        end
    end)

    it("trains with the symmetric contrastive loss (cross_entropy both ways)", function()
        tide.manual_seed(1)
        local model = tiny_clip()
        local optimizer = optim.Adam(model:parameters(), { lr = 5e-3 })
        local image, text = tiny_batch(4)
        -- labels = torch.arange(len(logits)): 1-based class ids
        local labels = tide.arange(1, 5)
        local losses = {}
        for _ = 1, 6 do
            optimizer:zero_grad()
            local logits_per_image, logits_per_text = model(image, text)
            -- loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
            local loss = (F.cross_entropy(logits_per_image, labels) +
                F.cross_entropy(logits_per_text, labels)) / 2
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            assert_finite(loss:item())
        end
        assert.is_true(losses[#losses] < losses[1], losses[1] .. " -> " .. losses[#losses])
        assert.is_not_nil(model.logit_scale.grad)
        assert.is_not_nil(model.visual.class_embedding.grad)
    end)

    it("convert_weights to half: the fp16-safe LayerNorm runs in float32 and casts back", function()
        tide.manual_seed(2)
        local model = tiny_clip()
        local image, text = tiny_batch(2)
        local ref_i, ref_t = model(image, text)
        convert_weights(model)
        assert.are.equal("float16", model.visual.conv1.weight.dtype)
        assert.are.equal("float16", model.transformer.resblocks[1].attn.in_proj_weight.dtype)
        assert.are.equal("float16", model.transformer.resblocks[1].attn.out_proj.weight.dtype)
        assert.are.equal("float16", model.text_projection.dtype)
        assert.are.equal("float16", model.visual.proj.dtype)
        -- LayerNorm and embeddings stay float32
        assert.are.equal("float32", model.ln_final.weight.dtype)
        assert.are.equal("float32", model.token_embedding.weight.dtype)
        assert.are.equal("float32", model.logit_scale.dtype)
        -- the LayerNorm subclass: float16 in, float16 out
        local y = model.ln_final(tide.randn(2, 16):half())
        assert.are.equal("float16", y.dtype)
        -- model.dtype is float16, encode_image casts the image to it
        assert.are.equal("float16", model:dtype())
        assert.are.equal("float16", model:encode_image(image).dtype)
        assert.are.equal("float16", model:encode_text(text).dtype)
        local logits_per_image, logits_per_text = model(image, text)
        -- (GAP fixed) logit_scale, a float32 0-dim tensor, times float16 image_features is
        -- float16, as PyTorch's: a 0-d tensor does not raise the dtype of one with dims
        assert.are.equal("float16", logits_per_image.dtype)
        assert.are.equal(0, max_abs_diff(logits_per_text, logits_per_image:t()))
        assert.is_true(max_abs_diff(logits_per_image, ref_i) < 0.1)
        assert.is_true(max_abs_diff(logits_per_text, ref_t) < 0.1)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. openai/whisper whisper/model.py
---------------------------------------------------------------------------------------------
describe("openai/whisper whisper/model.py", function()
    -- @dataclass class ModelDimensions: (a table of the ten fields, tiny)
    local function ModelDimensions(t)
        return t
    end

    -- Python's dict keeps insertion order, which TextDecoder's next(iter(kv_cache.values()))
    -- relies on (the first entry is the first self-attention key, whose length is the offset);
    -- a Lua table keyed by modules iterates in hash order, so the cache is this ordered table
    local function dict(src)
        local store, order = {}, {}
        local d = setmetatable({}, {
            __index = store,
            __newindex = function(_, k, v)
                if store[k] == nil then
                    order[#order + 1] = k
                end
                store[k] = v
            end,
            keys = order,
        })
        for _, k in ipairs(src and getmetatable(src).keys or {}) do
            d[k] = src[k]
        end
        return d
    end
    -- next(iter(d.values())), nil for an empty dict
    local function first_value(d)
        local k = getmetatable(d).keys[1]
        return k ~= nil and d[k] or nil
    end

    -- class LayerNorm(nn.LayerNorm):
    local LayerNorm = nn.LayerNorm:extend("WhisperLayerNorm")
    function LayerNorm:forward(x)
        -- return super().forward(x.float()).type(x.dtype)
        return nn.LayerNorm.forward(self, x:float()):type(x.dtype)
    end

    -- class Linear(nn.Linear):
    local Linear = nn.Linear:extend("WhisperLinear")
    function Linear:forward(x)
        return F.linear(
            x,
            self.weight:to(x.dtype),
            -- None if self.bias is None else self.bias.to(x.dtype),
            self.bias ~= nil and self.bias:to(x.dtype) or nil
        )
    end

    -- class Conv1d(nn.Conv1d):
    local Conv1d = nn.Conv1d:extend("WhisperConv1d")
    function Conv1d:_conv_forward(x, weight, bias)
        -- return super()._conv_forward(x, weight.to(x.dtype), None if bias is None else bias.to(x.dtype))
        return nn.Conv1d._conv_forward(self, x, weight:to(x.dtype), bias ~= nil and bias:to(x.dtype) or nil)
    end

    -- def sinusoids(length, channels, max_timescale=10000):
    local function sinusoids(length, channels, max_timescale)
        max_timescale = max_timescale or 10000
        assert(channels % 2 == 0)
        -- log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
        local log_timescale_increment = math.log(max_timescale) / (math.floor(channels / 2) - 1)
        -- inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
        local inv_timescales = tide.exp(-log_timescale_increment * tide.arange(math.floor(channels / 2)))
        -- scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
        local scaled_time = tide.arange(length)[{ {}, tide.newaxis }] * inv_timescales[{ tide.newaxis, {} }]
        -- return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)
        return tide.cat({ tide.sin(scaled_time), tide.cos(scaled_time) }, { dim = 2 })
    end

    -- class MultiHeadAttention(nn.Module):
    local MultiHeadAttention = nn.Module:extend("WhisperMultiHeadAttention")
    MultiHeadAttention.use_sdpa = true

    -- @contextmanager def disable_sdpa(): (a function that runs fn with use_sdpa off)
    local function disable_sdpa(fn)
        local prev_state = MultiHeadAttention.use_sdpa
        MultiHeadAttention.use_sdpa = false
        local ok, err = pcall(fn)
        MultiHeadAttention.use_sdpa = prev_state
        if not ok then
            error(err, 0)
        end
    end

    function MultiHeadAttention:init(n_state, n_head)
        self.n_head = n_head
        self.query = Linear(n_state, n_state)
        -- self.key = Linear(n_state, n_state, bias=False)
        self.key = Linear(n_state, n_state, { bias = false })
        self.value = Linear(n_state, n_state)
        self.out = Linear(n_state, n_state)
    end

    -- def forward(self, x, xa=None, mask=None, kv_cache=None):
    function MultiHeadAttention:forward(x, xa, mask, kv_cache)
        local q = self.query(x)

        local k, v
        -- if kv_cache is None or xa is None or self.key not in kv_cache:
        if kv_cache == nil or xa == nil or kv_cache[self.key] == nil then
            -- hooks, if installed (i.e. kv_cache is not None), will prepend the cached kv tensors;
            -- otherwise, perform key/value projections for self- or cross-attention as usual.
            -- k = self.key(x if xa is None else xa)
            k = self.key(xa == nil and x or xa)
            v = self.value(xa == nil and x or xa)
        else
            -- for cross-attention, calculate keys and values once and reuse in subsequent calls.
            k = kv_cache[self.key]
            v = kv_cache[self.value]
        end

        local wv, qk = self:qkv_attention(q, k, v, mask)
        return self.out(wv), qk
    end

    function MultiHeadAttention:qkv_attention(q, k, v, mask)
        -- n_batch, n_ctx, n_state = q.shape
        local _, n_ctx, n_state = unpack(q.shape)
        -- scale = (n_state // self.n_head) ** -0.25
        local scale = math.floor(n_state / self.n_head) ^ -0.25
        -- q = q.view(*q.shape[:2], self.n_head, -1).permute(0, 2, 1, 3)
        q = q:view(q.shape[1], q.shape[2], self.n_head, -1):permute(1, 3, 2, 4)
        k = k:view(k.shape[1], k.shape[2], self.n_head, -1):permute(1, 3, 2, 4)
        v = v:view(v.shape[1], v.shape[2], self.n_head, -1):permute(1, 3, 2, 4)

        local out, qk
        if MultiHeadAttention.use_sdpa then
            -- a = scaled_dot_product_attention(q, k, v, is_causal=mask is not None and n_ctx > 1)
            local a = F.scaled_dot_product_attention(q, k, v, { is_causal = mask ~= nil and n_ctx > 1 })
            -- out = a.permute(0, 2, 1, 3).flatten(start_dim=2)
            out = a:permute(1, 3, 2, 4):flatten({ start_dim = 3 })
            qk = nil
        else
            -- qk = (q * scale) @ (k * scale).transpose(-1, -2)
            qk = (q * scale):matmul((k * scale):transpose(-1, -2))
            if mask ~= nil then
                -- qk = qk + mask[:n_ctx, :n_ctx]
                qk = qk + mask[{ { 1, n_ctx }, { 1, n_ctx } }]
            end
            qk = qk:float()

            local w = F.softmax(qk, { dim = -1 }):to(q.dtype)
            out = w:matmul(v):permute(1, 3, 2, 4):flatten({ start_dim = 3 })
            qk = qk:detach()
        end

        return out, qk
    end

    -- class ResidualAttentionBlock(nn.Module):
    local ResidualAttentionBlock = nn.Module:extend("WhisperResidualAttentionBlock")
    function ResidualAttentionBlock:init(n_state, n_head, cross_attention)
        self.attn = MultiHeadAttention(n_state, n_head)
        self.attn_ln = LayerNorm(n_state)

        -- MultiHeadAttention(n_state, n_head) if cross_attention else None
        self.cross_attn = cross_attention and MultiHeadAttention(n_state, n_head) or nil
        self.cross_attn_ln = cross_attention and LayerNorm(n_state) or nil

        local n_mlp = n_state * 4
        self.mlp = nn.Sequential(
            Linear(n_state, n_mlp), nn.GELU(), Linear(n_mlp, n_state)
        )
        self.mlp_ln = LayerNorm(n_state)
    end

    -- def forward(self, x, xa=None, mask=None, kv_cache=None):
    function ResidualAttentionBlock:forward(x, xa, mask, kv_cache)
        -- x = x + self.attn(self.attn_ln(x), mask=mask, kv_cache=kv_cache)[0]
        x = x + (self.attn(self.attn_ln(x), nil, mask, kv_cache))
        if self.cross_attn then
            -- x = x + self.cross_attn(self.cross_attn_ln(x), xa, kv_cache=kv_cache)[0]
            x = x + (self.cross_attn(self.cross_attn_ln(x), xa, nil, kv_cache))
        end
        x = x + self.mlp(self.mlp_ln(x))
        return x
    end

    -- class AudioEncoder(nn.Module):
    local AudioEncoder = nn.Module:extend("AudioEncoder")
    function AudioEncoder:init(n_mels, n_ctx, n_state, n_head, n_layer)
        -- self.conv1 = Conv1d(n_mels, n_state, kernel_size=3, padding=1)
        self.conv1 = Conv1d(n_mels, n_state, { kernel_size = 3, padding = 1 })
        self.conv2 = Conv1d(n_state, n_state, { kernel_size = 3, stride = 2, padding = 1 })
        self:register_buffer("positional_embedding", sinusoids(n_ctx, n_state))

        -- nn.ModuleList([ResidualAttentionBlock(n_state, n_head) for _ in range(n_layer)])
        local blocks = {}
        for _ = 1, n_layer do
            blocks[#blocks + 1] = ResidualAttentionBlock(n_state, n_head)
        end
        self.blocks = nn.ModuleList(blocks)
        self.ln_post = LayerNorm(n_state)
    end

    function AudioEncoder:forward(x)
        -- x : torch.Tensor, shape = (batch_size, n_mels, n_ctx) the mel spectrogram of the audio
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x:permute(1, 3, 2)

        -- assert x.shape[1:] == self.positional_embedding.shape, "incorrect audio shape"
        assert(x.shape[{ { 2, -1 } }] == self.positional_embedding.shape, "incorrect audio shape")
        x = (x + self.positional_embedding):to(x.dtype)

        -- for block in self.blocks:
        for _, block in ipairs(self.blocks) do
            x = block(x)
        end

        x = self.ln_post(x)
        return x
    end

    -- class TextDecoder(nn.Module):
    local TextDecoder = nn.Module:extend("TextDecoder")
    function TextDecoder:init(n_vocab, n_ctx, n_state, n_head, n_layer)
        self.token_embedding = nn.Embedding(n_vocab, n_state)
        self.positional_embedding = nn.Parameter(tide.empty(n_ctx, n_state))

        -- [ResidualAttentionBlock(n_state, n_head, cross_attention=True) for _ in range(n_layer)]
        local blocks = {}
        for _ = 1, n_layer do
            blocks[#blocks + 1] = ResidualAttentionBlock(n_state, n_head, true)
        end
        self.blocks = nn.ModuleList(blocks)
        self.ln = LayerNorm(n_state)

        -- mask = torch.empty(n_ctx, n_ctx).fill_(-np.inf).triu_(1)
        local mask = tide.empty(n_ctx, n_ctx):fill_(-math.huge):triu_(1)
        -- self.register_buffer("mask", mask, persistent=False)
        self:register_buffer("mask", mask, { persistent = false })
    end

    -- def forward(self, x, xa, kv_cache=None):
    function TextDecoder:forward(x, xa, kv_cache)
        -- offset = next(iter(kv_cache.values())).shape[1] if kv_cache else 0
        local offset = (kv_cache and first_value(kv_cache)) and first_value(kv_cache).shape[2] or 0
        x = (
            self.token_embedding(x)
            -- + self.positional_embedding[offset : offset + x.shape[-1]]
            + self.positional_embedding[{ { offset + 1, offset + x.shape[-1] } }]
        )
        x = x:to(xa.dtype)

        for _, block in ipairs(self.blocks) do
            -- x = block(x, xa, mask=self.mask, kv_cache=kv_cache)
            x = block(x, xa, self.mask, kv_cache)
        end

        x = self.ln(x)
        local logits = (
            -- x @ torch.transpose(self.token_embedding.weight.to(x.dtype), 0, 1)
            x:matmul(tide.transpose(self.token_embedding.weight:to(x.dtype), 1, 2))
        ):float()

        return logits
    end

    -- class Whisper(nn.Module):
    local Whisper = nn.Module:extend("Whisper")
    function Whisper:init(dims)
        self.dims = dims
        self.encoder = AudioEncoder(
            self.dims.n_mels,
            self.dims.n_audio_ctx,
            self.dims.n_audio_state,
            self.dims.n_audio_head,
            self.dims.n_audio_layer
        )
        self.decoder = TextDecoder(
            self.dims.n_vocab,
            self.dims.n_text_ctx,
            self.dims.n_text_state,
            self.dims.n_text_head,
            self.dims.n_text_layer
        )
        -- use the last half among the decoder layers for time alignment by default
        -- all_heads = torch.zeros(self.dims.n_text_layer, self.dims.n_text_head, dtype=torch.bool)
        local all_heads = tide.zeros(self.dims.n_text_layer, self.dims.n_text_head, { dtype = tide.bool })
        -- all_heads[self.dims.n_text_layer // 2 :] = True
        all_heads[{ { math.floor(self.dims.n_text_layer / 2) + 1, -1 } }] = true
        -- self.register_buffer("alignment_heads", all_heads.to_sparse(), persistent=False)
        -- (tide has no sparse tensors: the dense mask)
        self:register_buffer("alignment_heads", all_heads, { persistent = false })
    end

    function Whisper:embed_audio(mel)
        return self.encoder(mel)
    end

    function Whisper:logits(tokens, audio_features)
        return self.decoder(tokens, audio_features)
    end

    function Whisper:forward(mel, tokens)
        return self.decoder(tokens, self.encoder(mel))
    end

    function Whisper:install_kv_cache_hooks(cache)
        -- cache = {**cache} if cache is not None else {}
        cache = dict(cache)
        local hooks = {}

        local function save_to_cache(module, _, output)
            -- if module not in cache or output.shape[1] > self.dims.n_text_ctx:
            if cache[module] == nil or output.shape[2] > self.dims.n_text_ctx then
                -- save as-is, for the first token or cross attention
                cache[module] = output
            else
                cache[module] = tide.cat({ cache[module], output }, { dim = 2 }):detach()
            end
            return cache[module]
        end

        local function install_hooks(layer)
            if tide.isinstance(layer, MultiHeadAttention) then
                -- hooks.append(layer.key.register_forward_hook(save_to_cache))
                hooks[#hooks + 1] = layer.key:register_forward_hook(save_to_cache)
                hooks[#hooks + 1] = layer.value:register_forward_hook(save_to_cache)
            end
        end

        self.decoder:apply(install_hooks)
        return cache, hooks
    end

    local function tiny_dims()
        return ModelDimensions({ n_mels = 8, n_audio_ctx = 6, n_audio_state = 16, n_audio_head = 2,
            n_audio_layer = 2, n_vocab = 30, n_text_ctx = 8, n_text_state = 16, n_text_head = 2,
            n_text_layer = 2 })
    end

    local function init_model(model)
        nn.init.normal_(model.decoder.positional_embedding, { std = 0.02 })
        return model
    end

    it("sinusoids: PyTorch's values", function()
        local s = sinusoids(4, 6)
        assert.are.equal("float32", s.dtype)
        -- torch: sinusoids(4, 6)
        local expected = tide.tensor({
            { 0.0, 0.0, 0.0, 1.0, 1.0, 1.0 },
            { 0.8414709568023682, 0.009999833069741726, 9.99999901978299e-05, 0.5403023362159729,
                0.9999499917030334, 1.0 },
            { 0.9092974066734314, 0.019998665899038315, 0.0001999999803956598, -0.416146844625473,
                0.9998000264167786, 1.0 },
            { 0.14112000167369843, 0.029995499178767204, 0.0002999999560415745, -0.9899924993515015,
                0.9995500445365906, 0.9999999403953552 } })
        assert.is_true(max_abs_diff(s, expected) < 1e-6)
    end)

    it("Whisper: shapes, buffers, SDPA against the written-out attention", function()
        tide.manual_seed(3)
        local model = init_model(Whisper(tiny_dims()))
        -- mel: (batch_size, n_mels, 2 * n_audio_ctx); conv2's stride 2 halves it
        local mel = tide.randn(2, 8, 12)
        local audio_features = model:embed_audio(mel)
        assert.are.same({ 2, 6, 16 }, audio_features.shape)
        local tokens = tide.randint(1, 31, { 2, 5 })
        local logits = model:logits(tokens, audio_features)
        assert.are.same({ 2, 5, 30 }, logits.shape)
        assert.are.equal("float32", logits.dtype)
        -- the mask buffer is not persistent; the sinusoid one is
        local sd = model:state_dict()
        assert.is_nil(sd["decoder.mask"])
        assert.is_nil(sd["alignment_heads"])
        assert.is_not_nil(sd["encoder.positional_embedding"])
        assert.are.same({ { false, false }, { true, true } }, model.alignment_heads:tolist())
        -- disable_sdpa: the explicit qk path gives the same logits
        local full = model(mel, tokens)
        assert.is_true(max_abs_diff(full, logits) < 1e-5)
        disable_sdpa(function()
            local explicit = model(mel, tokens)
            assert.is_true(max_abs_diff(explicit, full) < 1e-5)
        end)
        assert.is_true(MultiHeadAttention.use_sdpa)
        -- a wrong mel length fails the assert
        assert.has_error(function() model:embed_audio(tide.randn(2, 8, 10)) end)
    end)

    it("decoding with install_kv_cache_hooks gives the logits of the full forward", function()
        tide.manual_seed(4)
        local model = init_model(Whisper(tiny_dims()))
        model:eval()
        local mel = tide.randn(1, 8, 12)
        local audio_features = model:embed_audio(mel)
        local tokens = tide.randint(1, 31, { 1, 6 })
        local full = model:logits(tokens, audio_features)

        local kv_cache, hooks = model:install_kv_cache_hooks()
        assert.are.equal(8, #hooks) -- key and value of self and cross attention, 2 layers
        local steps = {}
        tide.no_grad(function()
            -- the prompt (3 tokens), then one token at a time, as decoding.py's inference
            steps[1] = model.decoder(tokens[{ {}, { 1, 3 } }], audio_features, kv_cache)
            for t = 4, 6 do
                steps[#steps + 1] = model.decoder(tokens[{ {}, { t, t } }], audio_features, kv_cache)
            end
        end)
        -- the self-attention cache holds the 6 positions; the cross one the 6 audio frames
        local block = model.decoder.blocks[1]
        assert.are.same({ 1, 6, 16 }, kv_cache[block.attn.key].shape)
        assert.are.same({ 1, 6, 16 }, kv_cache[block.cross_attn.value].shape)
        local cached = tide.cat(steps, { dim = 2 })
        assert.are.same({ 1, 6, 30 }, cached.shape)
        assert.is_true(max_abs_diff(cached, full) < 1e-5, tostring(max_abs_diff(cached, full)))
        -- for hook in hooks: hook.remove()
        for _, hook in ipairs(hooks) do
            hook:remove()
        end
        local again = model:logits(tokens, audio_features)
        assert.is_true(max_abs_diff(again, full) < 1e-6)
    end)

    it("trains a few steps: next-token cross_entropy, AdamW", function()
        tide.manual_seed(5)
        local model = init_model(Whisper(tiny_dims()))
        local optimizer = optim.AdamW(model:parameters(), { lr = 3e-3 })
        local mel = tide.randn(2, 8, 12)
        local tokens = tide.randint(1, 31, { 2, 7 })
        local losses = {}
        for _ = 1, 6 do
            optimizer:zero_grad()
            -- logits = model(mel, tokens[:, :-1])
            local logits = model(mel, tokens[{ {}, { 1, -2 } }])
            -- loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
            local loss = F.cross_entropy(logits:reshape(-1, logits.shape[-1]),
                tokens[{ {}, { 2, -1 } }]:reshape(-1))
            loss:backward()
            optimizer:step()
            losses[#losses + 1] = loss:item()
            assert_finite(loss:item())
        end
        assert.is_true(losses[#losses] < losses[1], losses[1] .. " -> " .. losses[#losses])
        assert.is_not_nil(model.encoder.conv1.weight.grad)
    end)

    it("half: Linear and Conv1d cast their weights to the input's dtype", function()
        tide.manual_seed(6)
        local conv = Conv1d(4, 6, { kernel_size = 3, padding = 1 })
        local x = tide.randn(1, 4, 5)
        local y = conv(x:half())
        assert.are.equal("float16", y.dtype)
        assert.are.equal("float32", conv.weight.dtype)
        assert.is_true(max_abs_diff(y, conv(x)) < 1e-2)
        -- nn.Conv1d._conv_forward(self, x, weight, bias) is PyTorch's: the given weight and bias
        local plain = nn.Conv1d(4, 6, 3, { padding = 1, padding_mode = "reflect" })
        local w2, b2 = tide.randn(6, 4, 3), tide.randn(6)
        local expect = F.conv1d(F.pad(x, { 1, 1 }, { mode = "reflect" }), w2, b2)
        assert.is_true(max_abs_diff(nn.Conv1d._conv_forward(plain, x, w2, b2), expect) < 1e-5)
        assert.is_true(max_abs_diff(plain(x), F.conv1d(F.pad(x, { 1, 1 }, { mode = "reflect" }),
            plain.weight, plain.bias)) < 1e-5)
        -- a weight of another dtype still raises, naming both
        assert.has_error(function() nn.Conv1d._conv_forward(plain, x:half(), w2, b2) end,
            'tide: Conv1d: the input is float16 and the weight float32; convert the input ' ..
            '(x:to("float32")) or the model (model:to("float16"))')
        local lin = Linear(4, 3)
        assert.are.equal("float16", lin(tide.randn(2, 4):half()).dtype)
        -- the whole model on float16 audio
        local model = init_model(Whisper(tiny_dims()))
        local mel = tide.randn(1, 8, 12)
        local ref = model(mel, tide.tensor({ { 1, 2, 3 } }))
        local out = model(mel:half(), tide.tensor({ { 1, 2, 3 } }))
        assert.are.equal("float32", out.dtype)
        assert.is_true(max_abs_diff(out, ref) < 0.05, tostring(max_abs_diff(out, ref)))
    end)
end)
