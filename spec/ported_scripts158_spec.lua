-- ported_scripts158_spec.lua — williamleif/graphsage-simple's graphsage/aggregators.py
-- (MeanAggregator: neighbour sampling, the unique-node mask, the gcn self-loop, the mean over
-- sampled neighbours), graphsage/encoders.py (Encoder: GraphSAGE concatenation or GCN-style,
-- relu(W . combined^T)) and graphsage/model.py (SupervisedGraphSage: forward, loss with
-- nn.CrossEntropyLoss; run_cora's two-layer model and SGD loop, 3 steps), ported line for line
-- at tiny sizes: 12 nodes, 5 features, 3 classes, a fixed graph, features from a formula in a
-- frozen nn.Embedding, weights from a formula (in place of init.xavier_uniform), and a fixed
-- sampler and shuffle in place of random.sample / random.shuffle so values compare with
-- PyTorch 1.13's. The Python line stands above each Lua line that differs from it.
-- Node ids stay 0-based data, as in the original (keys of adj_lists, entries of the sets, the
-- permutation, labels); 1 is added where they index a tensor: the Embedding ids (`+ 1` in
-- MeanAggregator.forward and Encoder.forward), the mask's rows and columns, and the labels
-- given to CrossEntropyLoss (SupervisedGraphSage.loss). Encoder's keyword arguments (num_sample,
-- base_model, gcn, cuda) come in an options table; Python's None for num_sample is false. The
-- second layer's lambda takes the Embedding-style ids back to 0-based (`ids - 1`). The gcn
-- self-loop's `samp_neigh + set([...])` raises TypeError in Python (sets have no +); both this
-- port and the PyTorch reference take the union it means.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list
local unpack = table.unpack or unpack -- luacheck: ignore

-- Python's sets of node ids: a table { [id] = true }; iterated in ascending id order, which is
-- the order CPython's set gives these small ints (PyTorch's unique_nodes_list below is
-- [0, 1, 3, ...], so the mask's columns line up)
local function set_list(s)
    local l = {}
    for n in pairs(s) do l[#l + 1] = n end
    table.sort(l)
    return l
end

local function set_len(s)
    return #set_list(s)
end

-- _set(list): a set of a list's ids
local function set_of(l)
    local s = {}
    for _, n in ipairs(l) do s[n] = true end
    return s
end

-- set.union(*sets)
local function set_union(sets)
    local u = {}
    for _, s in ipairs(sets) do
        for n in pairs(s) do u[n] = true end
    end
    return u
end

-- the injected sampler (random.sample's place): the k largest ids of the population
local function fixed_sample(population, k)
    local l = set_list(population)
    local out = {}
    for i = #l - k + 1, #l do out[#out + 1] = l[i] end
    return out
end

-- the injected shuffle (random.shuffle's place): rotate left by one, in place
local function fixed_shuffle(x)
    table.insert(x, table.remove(x, 1))
end

---------------------------------------------------------------------------------------------
-- graphsage/aggregators.py
---------------------------------------------------------------------------------------------
-- class MeanAggregator(nn.Module):
local MeanAggregator = nn.Module:extend("MeanAggregator")
-- def __init__(self, features, cuda=False, gcn=False):
function MeanAggregator:init(features, cuda, gcn)
    -- super(MeanAggregator, self).__init__()
    self.features = features
    -- self.cuda = cuda
    self.cuda = cuda or false
    -- self.gcn = gcn
    self.gcn = gcn or false
end

-- def forward(self, nodes, to_neighs, num_sample=10):
function MeanAggregator:forward(nodes, to_neighs, num_sample)
    -- num_sample --- number of neighbors to sample. No sampling if None. (Lua: false)
    if num_sample == nil then num_sample = 10 end
    -- _set = set
    local _set = set_of
    local samp_neighs
    -- if not num_sample is None:
    if num_sample then
        -- _sample = random.sample
        local _sample = fixed_sample
        -- samp_neighs = [_set(_sample(to_neigh, num_sample, )) if len(to_neigh) >= num_sample
        --                else to_neigh for to_neigh in to_neighs]
        samp_neighs = {}
        for _, to_neigh in ipairs(to_neighs) do
            samp_neighs[#samp_neighs + 1] = set_len(to_neigh) >= num_sample
                and _set(_sample(to_neigh, num_sample)) or to_neigh
        end
    else
        samp_neighs = to_neighs
    end

    if self.gcn then
        -- samp_neighs = [samp_neigh + set([nodes[i]]) for i, samp_neigh in enumerate(samp_neighs)]
        -- (set + set raises TypeError in Python; the union it means, as the reference does)
        local with_self = {}
        for i, samp_neigh in ipairs(samp_neighs) do
            with_self[i] = set_union({ samp_neigh, _set({ nodes[i] }) })
        end
        samp_neighs = with_self
    end
    -- unique_nodes_list = list(set.union(*samp_neighs))
    local unique_nodes_list = set_list(set_union(samp_neighs))
    -- unique_nodes = {n:i for i,n in enumerate(unique_nodes_list)}
    local unique_nodes = {}
    for i, n in ipairs(unique_nodes_list) do unique_nodes[n] = i - 1 end
    -- mask = Variable(torch.zeros(len(samp_neighs), len(unique_nodes)))
    local mask = tide.zeros(#samp_neighs, #unique_nodes_list)
    -- column_indices = [unique_nodes[n] for samp_neigh in samp_neighs for n in samp_neigh]
    local column_indices = {}
    for _, samp_neigh in ipairs(samp_neighs) do
        for _, n in ipairs(set_list(samp_neigh)) do
            column_indices[#column_indices + 1] = unique_nodes[n]
        end
    end
    -- row_indices = [i for i in range(len(samp_neighs)) for j in range(len(samp_neighs[i]))]
    local row_indices = {}
    for i = 0, #samp_neighs - 1 do
        for _ = 1, set_len(samp_neighs[i + 1]) do row_indices[#row_indices + 1] = i end
    end
    -- mask[row_indices, column_indices] = 1     (0-based positions: + 1 to index)
    -- (index tensors: a Lua list in an index table is Torch7's range {first, last, step})
    mask[{ tide.LongTensor(row_indices) + 1, tide.LongTensor(column_indices) + 1 }] = 1
    -- if self.cuda: mask = mask.cuda()   (CPU here; the encoder sets cuda = False, as run_cora)
    -- num_neigh = mask.sum(1, keepdim=True)
    local num_neigh = mask:sum(2, { keepdim = true })
    -- mask = mask.div(num_neigh)
    mask = mask:div(num_neigh)
    self.last_mask = mask -- (the spec reads it)
    -- embed_matrix = self.features(torch.LongTensor(unique_nodes_list))   (ids + 1)
    local embed_matrix = self.features(tide.LongTensor(unique_nodes_list) + 1)
    -- to_feats = mask.mm(embed_matrix)
    local to_feats = mask:mm(embed_matrix)
    return to_feats
end

---------------------------------------------------------------------------------------------
-- graphsage/encoders.py
---------------------------------------------------------------------------------------------
-- the fixed weights in place of init.xavier_uniform: b + 0.5 sin(1 + 0.7 i + 1.3 j + 0.1 n),
-- i, j 0-based, n the element count (the reference fills PyTorch's the same way)
local function fill(w, b)
    local r, c = w:size(1), w:size(2)
    local vals = {}
    for i = 0, r - 1 do
        local row = {}
        for j = 0, c - 1 do
            row[j + 1] = (b or 0) + 0.5 * math.sin(1 + 0.7 * i + 1.3 * j + 0.1 * r * c)
        end
        vals[i + 1] = row
    end
    tide.no_grad(function() w:copy_(tide.tensor(vals)) end)
end

-- class Encoder(nn.Module):
local Encoder = nn.Module:extend("Encoder")
-- def __init__(self, features, feature_dim, embed_dim, adj_lists, aggregator, num_sample=10,
--         base_model=None, gcn=False, cuda=False, feature_transform=False):
function Encoder:init(features, feature_dim, embed_dim, adj_lists, aggregator, opts)
    opts = opts or {}
    -- super(Encoder, self).__init__()
    self.features = features
    self.feat_dim = feature_dim
    self.adj_lists = adj_lists
    self.aggregator = aggregator
    -- self.num_sample = num_sample
    self.num_sample = opts.num_sample or 10
    -- if base_model != None:
    if opts.base_model ~= nil then
        self.base_model = opts.base_model
    end

    -- self.gcn = gcn
    self.gcn = opts.gcn or false
    self.embed_dim = embed_dim
    -- self.cuda = cuda
    self.cuda = opts.cuda or false
    self.aggregator.cuda = self.cuda
    -- self.weight = nn.Parameter(
    --         torch.FloatTensor(embed_dim, self.feat_dim if self.gcn else 2 * self.feat_dim))
    self.weight = nn.Parameter(tide.empty(embed_dim,
        self.gcn and self.feat_dim or 2 * self.feat_dim))
    -- init.xavier_uniform(self.weight)
    fill(self.weight, 0.25)
end

-- def forward(self, nodes):
function Encoder:forward(nodes)
    -- neigh_feats = self.aggregator.forward(nodes,
    --         [self.adj_lists[int(node)] for node in nodes], self.num_sample)
    local to_neighs = {}
    for i, node in ipairs(nodes) do to_neighs[i] = self.adj_lists[node] end
    local neigh_feats = self.aggregator:forward(nodes, to_neighs, self.num_sample)
    local combined
    if not self.gcn then
        -- self_feats = self.features(torch.LongTensor(nodes))   (ids + 1)
        local self_feats = self.features(tide.LongTensor(nodes) + 1)
        -- combined = torch.cat([self_feats, neigh_feats], dim=1)
        combined = tide.cat({ self_feats, neigh_feats }, 2)
    else
        combined = neigh_feats
    end
    -- combined = F.relu(self.weight.mm(combined.t()))
    combined = F.relu(self.weight:mm(combined:t()))
    return combined
end

---------------------------------------------------------------------------------------------
-- graphsage/model.py
---------------------------------------------------------------------------------------------
-- class SupervisedGraphSage(nn.Module):
local SupervisedGraphSage = nn.Module:extend("SupervisedGraphSage")
-- def __init__(self, num_classes, enc):
function SupervisedGraphSage:init(num_classes, enc)
    -- super(SupervisedGraphSage, self).__init__()
    self.enc = enc
    self.xent = nn.CrossEntropyLoss()

    -- self.weight = nn.Parameter(torch.FloatTensor(num_classes, enc.embed_dim))
    self.weight = nn.Parameter(tide.empty(num_classes, enc.embed_dim))
    -- init.xavier_uniform(self.weight)
    fill(self.weight, 0)
end

function SupervisedGraphSage:forward(nodes)
    local embeds = self.enc(nodes)
    -- scores = self.weight.mm(embeds)
    local scores = self.weight:mm(embeds)
    -- return scores.t()
    return scores:t()
end

-- def loss(self, nodes, labels):     (labels 0-based, as the data; + 1 for the loss)
function SupervisedGraphSage:loss(nodes, labels)
    -- scores = self.forward(nodes)
    local scores = self:forward(nodes)
    -- return self.xent(scores, labels.squeeze())
    return self.xent(scores, labels:squeeze() + 1)
end

-- the data (load_cora's place): 12 nodes, 5 features, 0-based labels i % 3, a fixed graph
local N, D, C = 12, 5, 3
-- feat_data = np.zeros((num_nodes, num_feats)) ... (here 0.5 + 0.5 cos(0.9 i + 0.4 j))
local feat_data = {}
for i = 0, N - 1 do
    local row = {}
    for j = 0, D - 1 do row[j + 1] = 0.5 + 0.5 * math.cos(0.9 * i + 0.4 * j) end
    feat_data[i + 1] = row
end
-- labels = np.empty((num_nodes,1), dtype=np.int64); labels[i] = label_map[...]
local labels_data = {}
for i = 0, N - 1 do labels_data[i + 1] = { i % 3 } end
local edges = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 0, 4 }, { 1, 5 }, { 2, 6 }, { 3, 7 }, { 4, 8 },
    { 5, 9 }, { 6, 10 }, { 7, 11 }, { 8, 9 }, { 9, 10 }, { 10, 11 }, { 11, 0 }, { 1, 2 } }
-- adj_lists = defaultdict(set)
local adj_lists = setmetatable({}, { __index = function(t, k)
    local s = {}
    rawset(t, k, s)
    return s
end })
for _, e in ipairs(edges) do
    local paper1, paper2 = e[1], e[2]
    -- adj_lists[paper1].add(paper2)
    adj_lists[paper1][paper2] = true
    -- adj_lists[paper2].add(paper1)
    adj_lists[paper2][paper1] = true
end

local function make_features()
    -- features = nn.Embedding(2708, 1433)
    local features = nn.Embedding(N, D)
    -- features.weight = nn.Parameter(torch.FloatTensor(feat_data), requires_grad=False)
    features.weight = nn.Parameter(tide.tensor(feat_data), false)
    return features
end

-- run_cora's features and two layers
local function run_cora_layers()
    -- features = nn.Embedding(2708, 1433)
    -- features.weight = nn.Parameter(torch.FloatTensor(feat_data), requires_grad=False)
    local features = make_features()
    local enc1
    -- lambda nodes : enc1(nodes).t()   (the aggregator hands it 1-based Embedding ids as a
    -- tensor; Encoder.forward takes a list of 0-based node ids, Python's int(node) walk)
    local function enc1_t(ids) return enc1((ids - 1):tolist()):t() end
    -- agg1 = MeanAggregator(features, cuda=True)
    local agg1 = MeanAggregator(features, true)
    -- enc1 = Encoder(features, 1433, 128, adj_lists, agg1, gcn=True, cuda=False)
    enc1 = Encoder(features, D, 4, adj_lists, agg1, { gcn = true, cuda = false })
    -- agg2 = MeanAggregator(lambda nodes : enc1(nodes).t(), cuda=False)
    local agg2 = MeanAggregator(enc1_t, false)
    -- enc2 = Encoder(lambda nodes : enc1(nodes).t(), enc1.embed_dim, 128, adj_lists, agg2,
    --         base_model=enc1, gcn=True, cuda=False)
    local enc2 = Encoder(enc1_t, enc1.embed_dim, 4, adj_lists, agg2,
        { base_model = enc1, gcn = true, cuda = false })
    -- enc1.num_samples = 5   (num_samples, not num_sample: no effect, as in the original)
    enc1.num_samples = 5
    enc2.num_samples = 5
    return features, enc1, enc2
end

local function flat(t)
    return t:contiguous():view(-1):totable()
end

describe("ported graphsage-simple (aggregators, encoders, model)", function()
    it("MeanAggregator: the sampled mask and the mean of neighbours, plain and gcn", function()
        local features = make_features()
        assert.is_false(features.weight.requires_grad)
        -- PyTorch 1.13's values (the reference samples with the same fixed sampler)
        local want = {
            [false] = {
                mask = { 0, 0, 1 / 3, 1 / 3, 0, 0, 0, 0, 0, 1 / 3, 0, 0, 0, 0, 1 / 3, 0, 1 / 3,
                    0, 1 / 3, 0, 0, 0.5, 0, 0, 0, 0, 0, 0.5, 0, 0, 1 / 3, 0, 0, 0, 0, 1 / 3, 0, 0,
                    1 / 3, 0 },
                out = { 0.05166305, 0.11773248, 0.24415354, 0.41096714, 0.59183705, 0.41440424,
                    0.40634653, 0.4130747, 0.43352643, 0.46447286, 0.59451646, 0.41637173,
                    0.25143006, 0.12573214, 0.05912288, 0.68145478, 0.63929182, 0.57513785,
                    0.49912125, 0.42324337 },
            },
            [true] = {
                mask = { 0.25, 0, 0.25, 0.25, 0, 0, 0, 0, 0, 0.25, 0, 0, 0, 0, 0.25, 0, 0.25,
                    0.25, 0.25, 0, 0, 1 / 3, 0, 0, 1 / 3, 0, 0, 1 / 3, 0, 0, 0.25, 0, 0, 0, 0,
                    0.25, 0, 0, 0.25, 0.25 },
                out = { 0.28874731, 0.32843199, 0.39520347, 0.4785201, 0.56522787, 0.40536016,
                    0.3545084, 0.3266266, 0.32611662, 0.35305905, 0.52787834, 0.47533324,
                    0.42668247, 0.38960689, 0.36995998, 0.52494216, 0.5243656, 0.51994222,
                    0.51237041, 0.50284564 },
            },
        }
        for _, gcn in ipairs({ false, true }) do
            local agg = MeanAggregator(features, false, gcn)
            local nodes = { 0, 9, 5, 11 }
            local to_neighs = {}
            for i, n in ipairs(nodes) do to_neighs[i] = adj_lists[n] end
            -- node 0 has 5 neighbours, 9 and 11 three: num_sample 3 samples those
            local out = agg(nodes, to_neighs, 3)
            assert.are.same({ 4, 10 }, agg.last_mask:size())
            assert.are.same({ 4, 5 }, out:size())
            assert_close_list(want[gcn].mask, flat(agg.last_mask), 1e-6, "mask")
            assert_close_list(want[gcn].out, flat(out), 1e-5, "to_feats")
        end
        -- num_sample = None (false): every neighbour, the mean over all 5 of node 0's
        local agg = MeanAggregator(features)
        local all = agg({ 0 }, { adj_lists[0] }, false)
        local w = features.weight
        local mean = (w[2] + w[3] + w[4] + w[5] + w[12]) / 5
        assert_close_list(flat(mean), flat(all), 1e-6, "unsampled mean")
    end)

    it("Encoder: GraphSAGE concatenation and run_cora's two GCN-style layers", function()
        local features = make_features()
        -- aggc = MeanAggregator(features); encc = Encoder(features, D, 4, adj_lists, aggc,
        --                                                  num_sample=3)
        local aggc = MeanAggregator(features)
        local encc = Encoder(features, D, 4, adj_lists, aggc, { num_sample = 3 })
        assert.are.same({ 4, 2 * D }, encc.weight:size())
        local nodes = { 0, 9, 5, 11 }
        assert_close_list({ 1.21548522, 0.49036217, 1.26291668, 1.16213024, 1.23188674,
            0.62016428, 1.2501775, 1.01779222, 1.30287671, 0.78740084, 1.25160646, 0.94755208,
            1.3950671, 0.91341782, 1.26653171, 0.98444492 }, flat(encc(nodes)), 1e-5, "encc")

        local _, enc1, enc2 = run_cora_layers()
        assert.is_false(enc1.aggregator.cuda) -- Encoder set it from True
        assert_close_list({ 0.45350441, 0.58953238, 0.19782348, 0.62169915, 0.41269779,
            0.55798262, 0.08243465, 0.56993306, 0.34620133, 0.51466256, 0.09843256, 0.58148521,
            0.28528938, 0.47994632, 0.23829317, 0.65092242 }, flat(enc1(nodes)), 1e-5, "enc1")
        assert_close_list({ 0.4317444, 0.24400133, 0.35768685, 0.27514237, 0.49844044,
            0.22623587, 0.3625387, 0.22725882, 0.64918035, 0.27942753, 0.47619161, 0.29878423,
            0.81306881, 0.37855947, 0.6451928, 0.4560791 }, flat(enc2(nodes)), 1e-5, "enc2")
    end)

    it("run_cora: SupervisedGraphSage's scores and 3 SGD steps on the frozen features", function()
        -- np.random.seed(1); random.seed(1)   (fixed permutation, sampler and shuffle instead)
        local features, _, enc2 = run_cora_layers()
        -- graphsage = SupervisedGraphSage(7, enc2)
        local graphsage = SupervisedGraphSage(C, enc2)
        -- rand_indices = np.random.permutation(num_nodes)   (a fixed one, 0-based ids)
        local rand_indices = { 7, 2, 10, 4, 0, 11, 5, 8, 1, 9, 3, 6 }
        -- test = rand_indices[:1000]; val = rand_indices[1000:1500]
        -- train = list(rand_indices[1500:])
        local val = { rand_indices[4], rand_indices[5], rand_indices[6] }
        local train = {}
        for i = 7, N do train[#train + 1] = rand_indices[i] end
        local train_all = { unpack(train) }
        -- labels[np.array(batch_nodes)] as a LongTensor, shape (B, 1), 0-based
        local function labels_of(batch_nodes)
            local l = {}
            for i, n in ipairs(batch_nodes) do l[i] = labels_data[n + 1] end
            return tide.LongTensor(l)
        end

        assert_close_list({ -0.07385035, -0.04079787, 0.01144248, -0.31029096, -0.19370441,
            0.01398434, -0.11899287, -0.05884758, 0.02897461 }, flat(graphsage:forward(val)),
            1e-5, "scores")
        local loss_before = graphsage:loss(train_all, labels_of(train_all)):item()
        assert_close_list({ 1.1025464534759521 }, { loss_before }, 1e-5, "train loss before")

        -- optimizer = torch.optim.SGD(filter(lambda p : p.requires_grad,
        --                                    graphsage.parameters()), lr=0.7)
        local trainable = {}
        for _, p in ipairs(graphsage:parameters()) do
            if p.requires_grad then trainable[#trainable + 1] = p end
        end
        assert.are.equal(3, #trainable) -- the frozen features' weight left out
        local optimizer = tide.optim.SGD(trainable, 0.7)
        local losses = {}
        -- for batch in range(100):
        for _ = 1, 3 do
            -- batch_nodes = train[:256]
            local batch_nodes = { train[1], train[2], train[3], train[4] }
            -- random.shuffle(train)
            fixed_shuffle(train)
            optimizer:zero_grad()
            -- loss = graphsage.loss(batch_nodes,
            --         Variable(torch.LongTensor(labels[np.array(batch_nodes)])))
            local loss = graphsage:loss(batch_nodes, labels_of(batch_nodes))
            loss:backward()
            optimizer:step()
            -- print batch, loss.data[0]
            losses[#losses + 1] = loss:item()
            assert_finite(losses[#losses], "loss")
        end
        assert_close_list({ 1.0547078847885132, 1.1256344318389893, 1.1945089101791382 },
            losses, 1e-5, "losses")
        assert.is_nil(features.weight.grad)
        -- val_output = graphsage.forward(val)
        assert_close_list({ 0.15808079, -0.06080478, -0.18556805, 0.21764442, -0.25138995,
            -0.40260389, 0.19261262, -0.09117141, -0.23461515 }, flat(graphsage:forward(val)),
            1e-5, "val scores")
        -- each batch differs; over the whole train split the loss falls
        local loss_after = graphsage:loss(train_all, labels_of(train_all)):item()
        assert_close_list({ 1.076084017753601 }, { loss_after }, 1e-5, "train loss after")
        assert.is_true(loss_after < loss_before)
    end)
end)
