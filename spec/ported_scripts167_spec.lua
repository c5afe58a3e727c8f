-- ported_scripts167_spec.lua — facebookresearch/moco's moco/builder.py (MoCo v2: encoder_q /
-- encoder_k from a base_encoder class with num_classes = dim, the mlp head that replaces fc by
-- Sequential(Linear, ReLU, fc), the key encoder copied from the query one and frozen, the
-- normalized queue and queue_ptr buffers, _momentum_update_key_encoder, _dequeue_and_enqueue,
-- the batch shuffle / unshuffle, forward's einsum logits) with main_moco.py's training step
-- (CrossEntropyLoss, SGD with momentum and weight decay), and facebookresearch/vicreg's
-- main_vicreg.py (VICReg's forward: invariance, variance and covariance terms, off_diagonal,
-- Projector, FullGatherLayer), ported line for line at tiny sizes (dim 8, K 16, batch 4; a
-- Linear-BatchNorm1d-ReLU encoder stands in for the ResNet). The Python line stands above each
-- Lua line that differs from it. Dims and class targets are 1-based (MoCo's positive key is
-- class 1); queue_ptr stays 0-based (it is a count of keys, compared with PyTorch's).
-- One process: concat_all_gather and FullGatherLayer's all_gather / all_reduce are the identity
-- (world size 1, rank 0), and _batch_shuffle_ddp / _batch_unshuffle_ddp keep their single-GPU
-- logic (randperm, argsort, index); the value checks fix the permutation on both sides.
-- The values were computed with PyTorch 1.13 on the same weights (a formula over each
-- parameter's index in named_parameters order), the same queue and the same inputs.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim
local unpack = table.unpack or unpack -- luacheck: ignore

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local assert_close_list = ported.assert_close_list

-- every parameter, in named_parameters order (k = 0, 1, ...), set from a fixed formula:
-- p.copy_((0.3 * torch.sin(0.731 * torch.arange(p.numel()).float() + 1.37 * k)).view(p.shape))
local function fill_from_formula(model)
    tide.no_grad(function()
        for k, np in ipairs(model:named_parameters()) do
            local p = np[2]
            local v = (tide.arange(p:numel()):float() * 0.731 + 1.37 * (k - 1)):sin() * 0.3
            p:copy_(v:view(p.shape))
        end
    end)
end

-- torch.sin(a * torch.arange(n).float() + b).view(*shape)
local function sinx(shape, a, b)
    local n = 1
    for _, s in ipairs(shape) do n = n * s end
    return (tide.arange(n):float() * a + b):sin():view(shape)
end

-- a tensor's values, flattened, as a Lua list
local function list(t)
    return t:detach():contiguous():view(-1):tolist()
end

---------------------------------------------------------------------------------------------
-- 1. facebookresearch/moco moco/builder.py
---------------------------------------------------------------------------------------------
-- the ResNet's stand-in: torchvision.models.__dict__[args.arch](num_classes=dim), at tiny size
local TinyEncoder = nn.Module:extend("TinyEncoder")
function TinyEncoder:init(num_classes)
    self.body = nn.Sequential(nn.Linear(6, 10), nn.BatchNorm1d(10), nn.ReLU())
    self.fc = nn.Linear(10, num_classes or 1000)
end
function TinyEncoder:forward(x)
    return self.fc(self.body(x))
end

-- @torch.no_grad()
-- def concat_all_gather(tensor):
local concat_all_gather = tide.no_grad()(function(tensor)
    -- tensors_gather = [torch.ones_like(tensor)
    --     for _ in range(torch.distributed.get_world_size())]
    local tensors_gather = { tide.ones_like(tensor) } -- one process: world size 1
    -- torch.distributed.all_gather(tensors_gather, tensor, async_op=False)
    tensors_gather[1]:copy_(tensor) -- all_gather over one process
    -- output = torch.cat(tensors_gather, dim=0)
    local output = tide.cat(tensors_gather, 1)
    return output
end)

-- class MoCo(nn.Module):
local MoCo = nn.Module:extend("MoCo")
-- def __init__(self, base_encoder, dim=128, K=65536, m=0.999, T=0.07, mlp=False):
function MoCo:init(base_encoder, dim, K, m, T, mlp)
    dim, K, m, T = dim or 128, K or 65536, m or 0.999, T or 0.07
    self.K = K
    self.m = m
    self.T = T

    -- create the encoders
    -- num_classes is the output fc dimension
    -- self.encoder_q = base_encoder(num_classes=dim)
    self.encoder_q = base_encoder(dim)
    -- self.encoder_k = base_encoder(num_classes=dim)
    self.encoder_k = base_encoder(dim)

    if mlp then -- hack: brute-force replacement
        -- dim_mlp = self.encoder_q.fc.weight.shape[1]
        local dim_mlp = self.encoder_q.fc.weight.shape[2]
        self.encoder_q.fc = nn.Sequential(
            nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_q.fc
        )
        self.encoder_k.fc = nn.Sequential(
            nn.Linear(dim_mlp, dim_mlp), nn.ReLU(), self.encoder_k.fc
        )
    end

    -- for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
    local params_q, params_k = self.encoder_q:parameters(), self.encoder_k:parameters()
    for i = 1, #params_q do
        local param_q, param_k = params_q[i], params_k[i]
        -- param_k.data.copy_(param_q.data)  # initialize
        param_k.data:copy_(param_q.data) -- initialize
        param_k.requires_grad = false -- not update by gradient
    end

    -- create the queue
    -- self.register_buffer("queue", torch.randn(dim, K))
    self:register_buffer("queue", tide.randn(dim, K))
    -- self.queue = nn.functional.normalize(self.queue, dim=0)
    self.queue = nn.functional.normalize(self.queue, { dim = 1 })

    -- self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))
    self:register_buffer("queue_ptr", tide.zeros(1, { dtype = tide.long }))
end

-- @torch.no_grad()
-- def _momentum_update_key_encoder(self):
MoCo._momentum_update_key_encoder = tide.no_grad()(function(self)
    -- Momentum update of the key encoder
    local params_q, params_k = self.encoder_q:parameters(), self.encoder_k:parameters()
    for i = 1, #params_q do
        local param_q, param_k = params_q[i], params_k[i]
        -- param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)
        param_k.data = param_k.data * self.m + param_q.data * (1.0 - self.m)
    end
end)

-- @torch.no_grad()
-- def _dequeue_and_enqueue(self, keys):
MoCo._dequeue_and_enqueue = tide.no_grad()(function(self, keys)
    -- gather keys before updating queue
    keys = concat_all_gather(keys)

    -- batch_size = keys.shape[0]
    local batch_size = keys.shape[1]

    -- ptr = int(self.queue_ptr)
    local ptr = self.queue_ptr:item()
    -- assert self.K % batch_size == 0  # for simplicity
    assert(self.K % batch_size == 0) -- for simplicity

    -- replace the keys at ptr (dequeue and enqueue)
    -- self.queue[:, ptr:ptr + batch_size] = keys.T
    self.queue[{ {}, { ptr + 1, ptr + batch_size } }] = keys.T
    -- ptr = (ptr + batch_size) % self.K  # move pointer
    ptr = (ptr + batch_size) % self.K -- move pointer

    -- self.queue_ptr[0] = ptr
    self.queue_ptr[1] = ptr
end)

-- @torch.no_grad()
-- def _batch_shuffle_ddp(self, x):
MoCo._batch_shuffle_ddp = tide.no_grad()(function(self, x)
    -- gather from all gpus
    -- batch_size_this = x.shape[0]
    local batch_size_this = x.shape[1]
    local x_gather = concat_all_gather(x)
    -- batch_size_all = x_gather.shape[0]
    local batch_size_all = x_gather.shape[1]

    -- num_gpus = batch_size_all // batch_size_this
    local num_gpus = math.floor(batch_size_all / batch_size_this)

    -- random shuffle index
    -- idx_shuffle = torch.randperm(batch_size_all).cuda()
    local idx_shuffle = tide.randperm(batch_size_all)

    -- broadcast to all gpus
    -- torch.distributed.broadcast(idx_shuffle, src=0)  (one process: nothing to send)

    -- index for restoring
    local idx_unshuffle = tide.argsort(idx_shuffle)

    -- shuffled index for this gpu
    -- gpu_idx = torch.distributed.get_rank()
    local gpu_idx = 1 -- rank 0, the first row
    -- idx_this = idx_shuffle.view(num_gpus, -1)[gpu_idx]
    local idx_this = idx_shuffle:view(num_gpus, -1)[gpu_idx]

    -- return x_gather[idx_this], idx_unshuffle
    return x_gather[idx_this], idx_unshuffle
end)

-- @torch.no_grad()
-- def _batch_unshuffle_ddp(self, x, idx_unshuffle):
MoCo._batch_unshuffle_ddp = tide.no_grad()(function(self, x, idx_unshuffle)
    -- gather from all gpus
    -- batch_size_this = x.shape[0]
    local batch_size_this = x.shape[1]
    local x_gather = concat_all_gather(x)
    -- batch_size_all = x_gather.shape[0]
    local batch_size_all = x_gather.shape[1]

    -- num_gpus = batch_size_all // batch_size_this
    local num_gpus = math.floor(batch_size_all / batch_size_this)

    -- restored index for this gpu
    -- gpu_idx = torch.distributed.get_rank()
    local gpu_idx = 1 -- rank 0, the first row
    -- idx_this = idx_unshuffle.view(num_gpus, -1)[gpu_idx]
    local idx_this = idx_unshuffle:view(num_gpus, -1)[gpu_idx]

    return x_gather[idx_this]
end)

-- def forward(self, im_q, im_k):
function MoCo:forward(im_q, im_k)
    -- compute query features
    local q = self.encoder_q(im_q) -- queries: NxC
    -- q = nn.functional.normalize(q, dim=1)
    q = nn.functional.normalize(q, { dim = 2 })

    -- compute key features
    local k
    -- with torch.no_grad():  # no gradient to keys
    tide.no_grad(function()
        self:_momentum_update_key_encoder() -- update the key encoder

        -- shuffle for making use of BN
        local idx_unshuffle
        -- im_k, idx_unshuffle = self._batch_shuffle_ddp(im_k)
        im_k, idx_unshuffle = self:_batch_shuffle_ddp(im_k)

        k = self.encoder_k(im_k) -- keys: NxC
        -- k = nn.functional.normalize(k, dim=1)
        k = nn.functional.normalize(k, { dim = 2 })

        -- undo shuffle
        -- k = self._batch_unshuffle_ddp(k, idx_unshuffle)
        k = self:_batch_unshuffle_ddp(k, idx_unshuffle)
    end)

    -- compute logits
    -- Einstein sum is more intuitive
    -- positive logits: Nx1
    -- l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
    local l_pos = tide.einsum("nc,nc->n", q, k):unsqueeze(-1)
    -- negative logits: NxK
    -- l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
    local l_neg = tide.einsum("nc,ck->nk", q, self.queue:clone():detach())

    -- logits: Nx(1+K)
    -- logits = torch.cat([l_pos, l_neg], dim=1)
    local logits = tide.cat({ l_pos, l_neg }, 2)

    -- apply temperature
    -- logits /= self.T
    logits:div_(self.T)

    -- labels: positive key indicators
    -- labels = torch.zeros(logits.shape[0], dtype=torch.long).cuda()
    local labels = tide.ones(logits.shape[1], { dtype = tide.long }) -- class 1: 1-based

    -- dequeue and enqueue
    self:_dequeue_and_enqueue(k)

    return logits, labels
end

---------------------------------------------------------------------------------------------
-- 2. facebookresearch/vicreg main_vicreg.py
---------------------------------------------------------------------------------------------
-- resnet.__dict__[args.arch](zero_init_residual=True)'s stand-in: (backbone, embedding)
local function tiny_backbone()
    return nn.Sequential(nn.Linear(6, 5), nn.ReLU()), 5
end

-- def off_diagonal(x):
local function off_diagonal(x)
    -- n, m = x.shape
    local n, m = x.shape[1], x.shape[2]
    -- assert n == m
    assert(n == m)
    -- return x.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()
    return x:flatten()[{ { 1, -2 } }]:view(n - 1, n + 1)[{ {}, { 2, -1 } }]:flatten()
end

-- class FullGatherLayer(torch.autograd.Function):
local FullGatherLayer = tide.autograd.Function:extend("FullGatherLayer")
-- def forward(ctx, x):
function FullGatherLayer.forward(ctx, x) -- luacheck: ignore ctx
    -- output = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
    local output = { tide.zeros_like(x) } -- one process: world size 1
    -- dist.all_gather(output, x)
    output[1]:copy_(x) -- all_gather over one process
    -- return tuple(output)
    return unpack(output)
end
-- def backward(ctx, *grads):
function FullGatherLayer.backward(ctx, ...) -- luacheck: ignore ctx
    -- all_gradients = torch.stack(grads)
    local all_gradients = tide.stack({ ... })
    -- dist.all_reduce(all_gradients)  (one process: the sum of one)
    -- return all_gradients[dist.get_rank()]
    return all_gradients[1] -- rank 0
end

-- def Projector(args, embedding):
local function Projector(args, embedding)
    -- mlp_spec = f"{embedding}-{args.mlp}"
    local mlp_spec = embedding .. "-" .. args.mlp
    local layers = {}
    -- f = list(map(int, mlp_spec.split("-")))
    local f = {}
    for s in mlp_spec:gmatch("[^-]+") do f[#f + 1] = tonumber(s) end
    -- for i in range(len(f) - 2):
    for i = 1, #f - 2 do
        -- layers.append(nn.Linear(f[i], f[i + 1]))
        layers[#layers + 1] = nn.Linear(f[i], f[i + 1])
        -- layers.append(nn.BatchNorm1d(f[i + 1]))
        layers[#layers + 1] = nn.BatchNorm1d(f[i + 1])
        -- layers.append(nn.ReLU(True))
        layers[#layers + 1] = nn.ReLU(true)
    end
    -- layers.append(nn.Linear(f[-2], f[-1], bias=False))
    layers[#layers + 1] = nn.Linear(f[#f - 1], f[#f], { bias = false })
    -- return nn.Sequential(*layers)
    return nn.Sequential(layers)
end

-- class VICReg(nn.Module):
local VICReg = nn.Module:extend("VICReg")
-- def __init__(self, args):
function VICReg:init(args)
    self.args = args
    -- self.num_features = int(args.mlp.split("-")[-1])
    self.num_features = tonumber(args.mlp:match("([^-]+)$"))
    -- self.backbone, self.embedding = resnet.__dict__[args.arch](zero_init_residual=True)
    self.backbone, self.embedding = tiny_backbone()
    self.projector = Projector(args, self.embedding)
end

-- def forward(self, x, y):
function VICReg:forward(x, y)
    x = self.projector(self.backbone(x))
    y = self.projector(self.backbone(y))

    -- repr_loss = F.mse_loss(x, y)
    local repr_loss = F.mse_loss(x, y)

    -- x = torch.cat(FullGatherLayer.apply(x), dim=0)
    x = tide.cat({ FullGatherLayer.apply(x) }, 1)
    -- y = torch.cat(FullGatherLayer.apply(y), dim=0)
    y = tide.cat({ FullGatherLayer.apply(y) }, 1)
    -- x = x - x.mean(dim=0)
    x = x - x:mean(1)
    -- y = y - y.mean(dim=0)
    y = y - y:mean(1)

    -- std_x = torch.sqrt(x.var(dim=0) + 0.0001)
    local std_x = tide.sqrt(x:var({ dim = 1 }) + 0.0001)
    -- std_y = torch.sqrt(y.var(dim=0) + 0.0001)
    local std_y = tide.sqrt(y:var({ dim = 1 }) + 0.0001)
    -- std_loss = torch.mean(F.relu(1 - std_x)) / 2 + torch.mean(F.relu(1 - std_y)) / 2
    local std_loss = tide.mean(F.relu(1 - std_x)) / 2 + tide.mean(F.relu(1 - std_y)) / 2

    -- cov_x = (x.T @ x) / (self.args.batch_size - 1)
    local cov_x = (x.T:matmul(x)) / (self.args.batch_size - 1)
    -- cov_y = (y.T @ y) / (self.args.batch_size - 1)
    local cov_y = (y.T:matmul(y)) / (self.args.batch_size - 1)
    -- cov_loss = off_diagonal(cov_x).pow_(2).sum().div(
    --     self.num_features
    -- ) + off_diagonal(cov_y).pow_(2).sum().div(self.num_features)
    local cov_loss = off_diagonal(cov_x):pow_(2):sum():div(
        self.num_features
    ) + off_diagonal(cov_y):pow_(2):sum():div(self.num_features)

    local loss = (
        self.args.sim_coeff * repr_loss
        + self.args.std_coeff * std_loss
        + self.args.cov_coeff * cov_loss
    )
    self.parts = { repr_loss:item(), std_loss:item(), cov_loss:item() } -- for the check
    return loss
end

---------------------------------------------------------------------------------------------
-- tests
---------------------------------------------------------------------------------------------
describe("ported facebookresearch/moco builder.py + main_moco.py (MoCo v2)", function()
    it("fills the queue, moves ptr, updates the key encoder and trains as PyTorch", function()
        -- the permutations randperm would draw, the same in the PyTorch check (0-based there:
        -- [2, 0, 3, 1] and [3, 2, 0, 1])
        local perms = { tide.tensor({ 3, 1, 4, 2 }, { dtype = tide.long }),
            tide.tensor({ 4, 3, 1, 2 }, { dtype = tide.long }) }
        local randperm = tide.randperm
        tide.randperm = function(n)
            assert(n == 4)
            return table.remove(perms, 1)
        end
        local ok, err = pcall(function()
            -- model = moco.builder.MoCo(models.__dict__[args.arch], args.moco_dim, args.moco_k,
            --                           args.moco_m, args.moco_t, args.mlp)
            local model = MoCo(TinyEncoder, 8, 16, 0.99, 0.2, true)
            -- the same weights and queue as the check (randn's draw differs from torch's)
            fill_from_formula(model.encoder_q)
            tide.no_grad(function()
                local params_q, params_k = model.encoder_q:parameters(),
                    model.encoder_k:parameters()
                for i = 1, #params_q do params_k[i]:copy_(params_q[i]) end
                model.queue:copy_(F.normalize(sinx({ 8, 16 }, 0.37, 0.5), { dim = 1 }))
            end)
            -- self.queue = normalize(...) kept queue a buffer, and the buffer is the new tensor
            local bufs = {}
            for _, nb in ipairs(model:named_buffers()) do bufs[nb[1]] = nb[2] end
            assert.are.equal(model.queue, bufs.queue)
            assert.are.equal(bufs.queue_ptr, model.queue_ptr)
            local names = {}
            for _, np in ipairs(model:named_parameters()) do names[#names + 1] = np[1] end
            -- PyTorch's encoder_q.fc.0.weight and encoder_k.fc.2.bias (tide names 1-based)
            assert.are.same("encoder_q.fc.1.weight", names[5])
            assert.are.same("encoder_k.fc.3.bias", names[16])
            assert.is_false(model.encoder_k.fc[3].weight.requires_grad)
            assert.is_true(model.encoder_q.fc[3].weight.requires_grad)

            -- criterion = nn.CrossEntropyLoss().cuda(args.gpu)
            local criterion = nn.CrossEntropyLoss()
            -- optimizer = torch.optim.SGD(model.parameters(), args.lr,
            --     momentum=args.momentum, weight_decay=args.weight_decay)
            local optimizer = optim.SGD(model:parameters(), 0.5,
                { momentum = 0.9, weight_decay = 1e-4 })
            local want = {
                { loss = 0.7257617712020874,
                  row1 = { 4.9915738, -2.1120763, -3.1078284, -3.6712477, -3.6600688,
                      -3.1046665, -2.1631467, -1.000129, 0.2645454, 1.5295939, 2.6600294,
                      3.4610167, 3.7398045, 3.4367695, 2.6621842, 1.5900849, 0.3626502 },
                  pos = { 4.9915738, 4.9989367, 4.8933239, 4.9664135 },
                  queue = { -0.0326304, 0.0759187, 0.0452727, 0.0155937, -0.4361749,
                      -0.2963384, -0.3785498, -0.3504263, -0.5536619, -0.5108223, -0.5540446,
                      -0.519848, -0.3092615, -0.3962599, -0.3444337, -0.3686001, 0.1117352,
                      -0.0151519, 0.0918611, 0.0104281, 0.4158818, 0.3719857, 0.4316804,
                      0.369908, 0.427099, 0.5032083, 0.4489603, 0.4862198, 0.1965872,
                      0.3108652, 0.1808281, 0.3122495 },
                  ptr = 4,
                  k_fc = { 0.2801279, 0.1368754, -0.0763185, -0.2505147, -0.2967016,
                      -0.1912781, 0.011886, 0.2089761, 0.2992827, 0.2366602 } },
                { loss = 1.6615222692489624,
                  row1 = { 3.3066425, 3.2370636, 3.5189846, 3.6013834, 3.2902389, -0.1792486,
                      -0.0950531, -0.0029966, 0.0882485, 0.17122, 0.2360282, 0.2696999,
                      0.2619683, 0.2139791, 0.1380405, 0.0485403, -0.0440157 },
                  pos = { 3.3066425, 3.7729459, 3.3408341, 3.4200673 },
                  queue = { 0.0099515, 0.0993795, -0.0112204, 0.0514647, -0.3698186,
                      -0.3223918, -0.4423048, -0.3211398, -0.5297143, -0.5407962, -0.5644374,
                      -0.5153674, -0.3575849, -0.3783329, -0.2961582, -0.3842375, 0.031966,
                      0.048729, 0.1479654, -0.0048505, 0.3808463, 0.4210288, 0.440837,
                      0.3697875, 0.4751721, 0.4759579, 0.4055865, 0.4960175, 0.2877788,
                      0.2107493, 0.1311864, 0.3133351 },
                  ptr = 8,
                  k_fc = { 0.2814184, 0.1377985, -0.0756536, -0.2497099, -0.2961796,
                      -0.1912282, 0.011886, 0.208976, 0.2992826, 0.2379452 } },
            }
            -- model.train()
            model:train()
            -- for i, (images, _) in enumerate(train_loader):
            for step = 1, 2 do
                local images = { sinx({ 4, 6 }, 0.53, 0.1 + step - 1),
                    sinx({ 4, 6 }, 0.41, 0.7 + step - 1) }
                -- output, target = model(im_q=images[0], im_k=images[1])
                local output, target = model(images[1], images[2])
                -- loss = criterion(output, target)
                local loss = criterion(output, target)
                local w = want[step]
                assert_finite(loss:item(), "loss")
                assert_close_list({ w.loss }, { loss:item() }, 1e-4, "loss " .. step)
                assert.are.same({ 4, 17 }, { output:size(1), output:size(2) })
                assert.are.equal(2, output:dim())
                assert_close_list(w.row1, list(output[1]), 1e-4, "logits[1] " .. step)
                assert_close_list(w.pos, list(output[{ {}, 1 }]), 1e-4, "l_pos " .. step)
                assert.are.same({ 1, 1, 1, 1 }, target:tolist())
                assert.are.equal(tide.long, target.dtype)
                -- the keys just enqueued, queue[:, 4*(step-1) : 4*step]
                assert_close_list(w.queue, list(model.queue[{ {}, { 4 * step - 3, 4 * step } }]),
                    1e-4, "queue " .. step)
                assert.are.equal(w.ptr, model.queue_ptr[1]:item())
                assert_close_list(w.k_fc, list(model.encoder_k.fc[3].weight[1]), 1e-4,
                    "encoder_k.fc.2.weight[0] " .. step)
                -- optimizer.zero_grad()
                optimizer:zero_grad()
                loss:backward()
                optimizer:step()
                assert.is_nil(model.encoder_k.fc[3].weight.grad)
            end
            assert_close_list({ 0.5154696, 0.3040013, 0.0470001, -0.0975762, -0.1975161,
                -0.181782, 0.0118843, 0.2089458, 0.2992393, 0.4734676 },
                list(model.encoder_q.fc[3].weight[1]), 1e-4, "encoder_q.fc.2.weight[0]")
            assert_close_list({ 0.0743093, 0.0139559, 0.0214949, 0.0092543, -0.0770983,
                -0.0707671, 0.0069925, 0.0052286, 0.0142865, 0.0832948 },
                list(model.encoder_k.body[2].running_mean), 1e-4, "encoder_k running_mean")
        end)
        tide.randperm = randperm
        assert(ok, err)
    end)
end)

describe("ported facebookresearch/vicreg main_vicreg.py (VICReg)", function()
    it("off_diagonal keeps the entries off the diagonal, row by row", function()
        assert.are.same({ 1, 2, 3, 5, 6, 7 }, off_diagonal(tide.arange(9):float():view(3, 3))
            :tolist())
    end)

    it("gives PyTorch's loss, its three parts and the inputs' gradients", function()
        local args = { mlp = "8-8", batch_size = 4, sim_coeff = 25.0, std_coeff = 25.0,
            cov_coeff = 1.0 }
        local model = VICReg(args)
        fill_from_formula(model)
        local x = sinx({ 4, 6 }, 0.53, 0.1):requires_grad_()
        local y = sinx({ 4, 6 }, 0.41, 0.7):requires_grad_()
        local loss = model(x, y)
        loss:backward()
        assert_close_list({ 23.22726821899414 }, { loss:item() }, 1e-5, "loss")
        assert_close_list({ 0.005708872806280851, 0.9233573079109192, 0.0006139070028439164 },
            model.parts, 1e-5, "repr/std/cov")
        assert_close_list({ -0.0851936, 0.0053142, 0.0931065, 0.1333227, 0.1054128, 0.0236386,
            0.0704498, 0.1073678, 0.0894224, 0.0257835, -0.0510305, -0.1017686, -0.0296417,
            -0.0004761, 0.0289327, 0.0435574, 0.0359248, 0.0099352, 0.0562821, 0.1976863,
            0.2380756, 0.1568117, -0.0045807, -0.1636324 }, list(x.grad), 1e-4, "x.grad")
        assert_close_list({ 0.1573082, 0.100166, -0.0081595, -0.1123157, -0.1590802,
            -0.1245569, -0.0336796, 0.0043329, 0.0401314, 0.0554234, 0.0423947, 0.007703,
            -0.0978555, -0.0502527, 0.0230284, 0.0845424, 0.1028564, 0.0686122, -0.2164753,
            -0.0877817, 0.085767, 0.21549, 0.235101, 0.1345784 }, list(y.grad), 1e-4, "y.grad")
    end)
end)
