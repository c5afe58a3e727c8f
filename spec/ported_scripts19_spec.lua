-- ported_scripts19_spec.lua — pytorch/tutorials' beginner_source/data_loading_tutorial.py (the
-- FaceLandmarksDataset with __len__/__getitem__ and a transform; the callable transforms Rescale,
-- RandomCrop, ToTensor composed; DataLoader(batch_size, shuffle, num_workers) over dict samples)
-- and the model part of chatbot_tutorial.py (EncoderRNN: bidirectional GRU over
-- pack_padded_sequence / pad_packed_sequence; Luong Attn "dot", "general", "concat";
-- LuongAttnDecoderRNN; maskNLLLoss; train() with teacher forcing and clip_grad_norm_;
-- GreedySearchDecoder), ported line for line on tiny random data. The Python line stands above
-- each Lua line that differs from it. Dims, indices and tokens are 1-based.
local tide = require("tide")
local nn = tide.nn
local F = nn.functional
local optim = tide.optim

local ported = require("spec.support.ported")
local assert_finite = ported.assert_finite
local isinstance = tide.isinstance
local unpack = table.unpack or unpack -- luacheck: ignore

-- Python's plain classes (class X(object)): X(...) runs __init__ on a new instance, x(...) __call__
local class = ported.class

---------------------------------------------------------------------------------------------
-- 1. data_loading_tutorial.py
---------------------------------------------------------------------------------------------
describe("data_loading_tutorial.py", function()
    -- the csv and the images: 6 faces, random H x W x 3 images of varying sizes, 4 landmarks each
    -- (pd.read_csv('data/faces/face_landmarks.csv') and io.imread(img_name) read these)
    local function make_faces()
        tide.manual_seed(0)
        local frame = {}
        local sizes = { { 20, 16 }, { 18, 24 }, { 16, 16 }, { 22, 18 }, { 17, 20 }, { 24, 19 } }
        for i, hw in ipairs(sizes) do
            frame[i] = {
                name = "face" .. i .. ".jpg",
                image = tide.rand(hw[1], hw[2], 3),
                landmarks = tide.rand(8):mul(10):tolist(),
            }
        end
        return frame
    end

    -- class FaceLandmarksDataset(Dataset):
    local FaceLandmarksDataset = tide.data.Dataset:extend("FaceLandmarksDataset")
    -- def __init__(self, csv_file, root_dir, transform=None):
    function FaceLandmarksDataset:init(opts)
        -- self.landmarks_frame = pd.read_csv(csv_file)
        self.landmarks_frame = opts.csv_file
        self.root_dir = opts.root_dir
        self.transform = opts.transform
    end

    function FaceLandmarksDataset:__len__()
        return #self.landmarks_frame
    end

    function FaceLandmarksDataset:__getitem__(idx)
        -- if torch.is_tensor(idx):
        if tide.is_tensor(idx) then
            idx = idx:tolist()
        end

        -- img_name = os.path.join(self.root_dir, self.landmarks_frame.iloc[idx, 0])
        local img_name = self.root_dir .. self.landmarks_frame[idx].name
        assert(img_name:match("^data/faces/face%d%.jpg$"))
        -- image = io.imread(img_name)
        local image = self.landmarks_frame[idx].image
        -- landmarks = self.landmarks_frame.iloc[idx, 1:]
        local landmarks = self.landmarks_frame[idx].landmarks
        -- landmarks = np.array([landmarks])
        landmarks = tide.tensor({ landmarks })
        -- landmarks = landmarks.astype('float').reshape(-1, 2)
        landmarks = landmarks:float():reshape(-1, 2)
        -- sample = {'image': image, 'landmarks': landmarks}
        local sample = { image = image, landmarks = landmarks }

        if self.transform then
            sample = self.transform(sample)
        end

        return sample
    end

    -- class Rescale(object):
    local Rescale = class("Rescale")
    function Rescale:__init__(output_size)
        -- assert isinstance(output_size, (int, tuple))
        assert(type(output_size) == "number" or type(output_size) == "table")
        self.output_size = output_size
    end

    function Rescale:__call__(sample)
        local image, landmarks = sample["image"], sample["landmarks"]

        -- h, w = image.shape[:2]
        local h, w = image.shape[1], image.shape[2]
        local new_h, new_w
        -- if isinstance(self.output_size, int):
        if type(self.output_size) == "number" then
            if h > w then
                new_h, new_w = self.output_size * h / w, self.output_size
            else
                new_h, new_w = self.output_size, self.output_size * w / h
            end
        else
            new_h, new_w = self.output_size[1], self.output_size[2]
        end

        -- new_h, new_w = int(new_h), int(new_w)
        new_h, new_w = math.floor(new_h), math.floor(new_w)

        -- img = transform.resize(image, (new_h, new_w))  (skimage: bilinear over H x W x C)
        local img = F.interpolate(image:permute(3, 1, 2):unsqueeze(1), { size = { new_h, new_w },
            mode = "bilinear", align_corners = false }):squeeze(1):permute(2, 3, 1)

        -- landmarks = landmarks * [new_w / w, new_h / h]
        landmarks = landmarks * tide.tensor({ new_w / w, new_h / h })

        return { image = img, landmarks = landmarks }
    end

    -- class RandomCrop(object):
    local RandomCrop = class("RandomCrop")
    function RandomCrop:__init__(output_size)
        assert(type(output_size) == "number" or type(output_size) == "table")
        if type(output_size) == "number" then
            self.output_size = { output_size, output_size }
        else
            assert(#output_size == 2)
            self.output_size = output_size
        end
    end

    function RandomCrop:__call__(sample)
        local image, landmarks = sample["image"], sample["landmarks"]

        local h, w = image.shape[1], image.shape[2]
        local new_h, new_w = self.output_size[1], self.output_size[2]

        -- top = np.random.randint(0, h - new_h)
        local top = tide.randint(0, h - new_h, { 1 }):item()
        local left = tide.randint(0, w - new_w, { 1 }):item()

        -- image = image[top: top + new_h, left: left + new_w]
        image = image[{ { top + 1, top + new_h }, { left + 1, left + new_w } }]

        -- landmarks = landmarks - [left, top]
        landmarks = landmarks - tide.tensor({ left, top })

        return { image = image, landmarks = landmarks }
    end

    -- class ToTensor(object):
    local ToTensor = class("ToTensor")
    function ToTensor:__call__(sample)
        local image, landmarks = sample["image"], sample["landmarks"]

        -- image = image.transpose((2, 0, 1))  (numpy's transpose is permute)
        image = image:permute(3, 1, 2)
        -- return {'image': torch.from_numpy(image), 'landmarks': torch.from_numpy(landmarks)}
        return { image = image:contiguous(), landmarks = landmarks }
    end

    -- torchvision.transforms.Compose
    local Compose = class("Compose")
    function Compose:__init__(transforms)
        self.transforms = transforms
    end

    function Compose:__call__(img)
        for _, t in ipairs(self.transforms) do
            img = t(img)
        end
        return img
    end
    local transforms = { Compose = Compose }

    it("FaceLandmarksDataset: dataset[i] is the sample dict, transforms by hand", function()
        local frame = make_faces()
        -- face_dataset = FaceLandmarksDataset(csv_file='data/faces/face_landmarks.csv', root_dir='data/faces/')
        local face_dataset = FaceLandmarksDataset({ csv_file = frame, root_dir = "data/faces/" })

        -- for i in range(len(face_dataset)):
        -- (len(ds) is #ds from Lua 5.2; ds:len() on every Lua)
        for i = 1, face_dataset:len() do
            -- sample = face_dataset[i]
            local sample = face_dataset[i]
            -- print(i, sample['image'].shape, sample['landmarks'].shape)
            assert.are.same(frame[i].image.shape, sample["image"].shape)
            assert.are.same({ 4, 2 }, sample["landmarks"].shape)
            if i == 4 then
                break
            end
        end

        -- scale = Rescale(256); crop = RandomCrop(128)
        local scale = Rescale(12)
        local crop = RandomCrop(8)
        -- composed = transforms.Compose([Rescale(256), RandomCrop(224)])
        local composed = transforms.Compose({ Rescale(12), RandomCrop(10) })

        -- sample = face_dataset[65]
        local sample = face_dataset[2] -- 18 x 24
        -- for i, tsfrm in enumerate([scale, crop, composed]):
        local want = { { 12, 16, 3 }, { 8, 8, 3 }, { 10, 10, 3 } }
        for i, tsfrm in ipairs({ scale, crop, composed }) do
            local transformed_sample = tsfrm(sample)
            assert.are.same(want[i], transformed_sample["image"].shape)
        end
        -- Rescale scales the landmarks by (new_w / w, new_h / h)
        local scaled = scale(sample)
        assert.is_true(tide.allclose(scaled["landmarks"], sample["landmarks"] * tide.tensor({ 16 / 24, 12 / 18 })))
    end)

    it("transformed_dataset and DataLoader(batch_size=4, shuffle=True, num_workers=4) over dict samples", function()
        local frame = make_faces()
        -- transformed_dataset = FaceLandmarksDataset(csv_file=..., root_dir=..., transform=transforms.Compose([Rescale(256), RandomCrop(224), ToTensor()]))
        local transformed_dataset = FaceLandmarksDataset({ csv_file = frame, root_dir = "data/faces/",
            transform = transforms.Compose({
                Rescale(16),
                RandomCrop(14),
                ToTensor(),
            }) })

        for i = 1, transformed_dataset:len() do
            local sample = transformed_dataset[i]
            -- print(i, sample['image'].size(), sample['landmarks'].size())
            assert.are.same({ 3, 14, 14 }, sample["image"]:size())
            assert.are.same({ 4, 2 }, sample["landmarks"]:size())
            if i == 4 then
                break
            end
        end

        -- dataloader = DataLoader(transformed_dataset, batch_size=4, shuffle=True, num_workers=4)
        local dataloader = tide.data.DataLoader(transformed_dataset, { batch_size = 4,
            shuffle = true, num_workers = 4 })

        local shapes = {}
        -- for i_batch, sample_batched in enumerate(dataloader):
        local i_batch = 0
        for sample_batched in dataloader:iter() do
            i_batch = i_batch + 1
            -- print(i_batch, sample_batched['image'].size(), sample_batched['landmarks'].size())
            shapes[i_batch] = { sample_batched["image"]:size(), sample_batched["landmarks"]:size() }
            -- show_landmarks_batch: images_batch, landmarks_batch = sample_batched['image'], sample_batched['landmarks']
            local images_batch, landmarks_batch = sample_batched["image"], sample_batched["landmarks"]
            -- batch_size = len(images_batch)
            local batch_size = #images_batch
            -- im_size = images_batch.size(2)
            local im_size = images_batch:size(3)
            assert.are.equal(14, im_size)
            -- landmarks_batch[i, :, 0].numpy() + i * im_size + (i + 1) * grid_border_size
            for i = 1, batch_size do
                local xs = landmarks_batch[{ i, {}, 1 }] + (i - 1) * im_size + i * 2
                assert.are.same({ 4 }, xs.shape)
            end
        end
        assert.are.same({ { { 4, 3, 14, 14 }, { 4, 4, 2 } }, { { 2, 3, 14, 14 }, { 2, 4, 2 } } }, shapes)
    end)
end)

describe("Dataset: ds[i] is what PyTorch's dataset[i] is", function()
    it("a dict sample, a one-value __getitem__ as they are; several fields packed", function()
        local D = tide.data.Dataset:extend("DictDs")
        function D:len() return 2 end
        function D:get(i) return { image = tide.ones(2) * i, label = i } end
        local ds = D()
        assert.are.equal(2, ds[2]["label"])
        assert.are.same({ 2, 2 }, ds[2]["image"]:tolist())
        local T = tide.data.Dataset:extend("OneTensor")
        function T:__len__() return 3 end
        function T:__getitem__(i) return tide.tensor({ i }) end
        assert.is_true(tide.is_tensor(T()[3]))
        assert.are.same({ 3 }, T()[3]:tolist())
        local P = tide.data.Dataset:extend("Pairs")
        function P:__len__() return 3 end
        function P:__getitem__(i) return tide.tensor({ i }), i end
        local x, y = unpack(P()[2])
        assert.are.same({ 2 }, x:tolist())
        assert.are.equal(2, y)
    end)
end)

---------------------------------------------------------------------------------------------
-- 2. chatbot_tutorial.py (the model part)
---------------------------------------------------------------------------------------------
describe("chatbot_tutorial.py", function()
    -- PAD_token = 0; SOS_token = 1; EOS_token = 2  (token ids index the embedding: 1-based)
    local PAD_token, SOS_token, EOS_token = 1, 2, 3
    local MAX_LENGTH = 6
    local device = tide.device("cpu")

    -- def zeroPadding(l, fillvalue=PAD_token): return list(itertools.zip_longest(*l, fillvalue=fillvalue))
    local function zeroPadding(l, fillvalue)
        fillvalue = fillvalue or PAD_token
        local n = 0
        for _, s in ipairs(l) do n = math.max(n, #s) end
        local out = {}
        for t = 1, n do
            out[t] = {}
            for b, s in ipairs(l) do out[t][b] = s[t] or fillvalue end
        end
        return out
    end

    local function binaryMatrix(l, value)
        value = value or PAD_token
        local m = {}
        for i, seq in ipairs(l) do
            m[i] = {}
            for _, token in ipairs(seq) do
                -- if token == PAD_token: m[i].append(0) else: m[i].append(1)
                m[i][#m[i] + 1] = token == value and 0 or 1
            end
        end
        return m
    end

    -- inputVar / outputVar on index lists (indexesFromSentence already applied; EOS appended)
    local function inputVar(indexes_batch)
        -- lengths = torch.tensor([len(indexes) for indexes in indexes_batch])
        local lens = {}
        for i, indexes in ipairs(indexes_batch) do lens[i] = #indexes end
        local lengths = tide.tensor(lens)
        local padList = zeroPadding(indexes_batch)
        -- padVar = torch.LongTensor(padList)
        local padVar = tide.LongTensor(padList)
        return padVar, lengths
    end

    local function outputVar(indexes_batch)
        -- max_target_len = max([len(indexes) for indexes in indexes_batch])
        local max_target_len = 0
        for _, indexes in ipairs(indexes_batch) do max_target_len = math.max(max_target_len, #indexes) end
        local padList = zeroPadding(indexes_batch)
        local mask = binaryMatrix(padList)
        -- mask = torch.BoolTensor(mask)
        mask = tide.BoolTensor(mask)
        local padVar = tide.LongTensor(padList)
        return padVar, mask, max_target_len
    end

    -- class EncoderRNN(nn.Module):
    local EncoderRNN = nn.Module:extend("EncoderRNN")
    function EncoderRNN:init(hidden_size, embedding, n_layers, dropout)
        n_layers = n_layers or 1
        dropout = dropout or 0
        self.n_layers = n_layers
        self.hidden_size = hidden_size
        self.embedding = embedding

        -- self.gru = nn.GRU(hidden_size, hidden_size, n_layers, dropout=(0 if n_layers == 1 else dropout), bidirectional=True)
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers,
            { dropout = (n_layers == 1 and 0 or dropout), bidirectional = true })
    end

    function EncoderRNN:forward(input_seq, input_lengths, hidden)
        local embedded = self.embedding(input_seq)
        -- packed = nn.utils.rnn.pack_padded_sequence(embedded, input_lengths)
        local packed = nn.utils.rnn.pack_padded_sequence(embedded, input_lengths)
        local outputs
        outputs, hidden = self.gru(packed, hidden)
        -- outputs, _ = nn.utils.rnn.pad_packed_sequence(outputs)
        outputs = nn.utils.rnn.pad_packed_sequence(outputs)
        -- outputs = outputs[:, :, :self.hidden_size] + outputs[:, : ,self.hidden_size:]
        outputs = outputs[{ {}, {}, { 1, self.hidden_size } }] + outputs[{ {}, {}, { self.hidden_size + 1, -1 } }]
        return outputs, hidden
    end

    -- class Attn(nn.Module):
    local Attn = nn.Module:extend("Attn")
    function Attn:init(method, hidden_size)
        self.method = method
        -- if self.method not in ['dot', 'general', 'concat']:
        if not ({ dot = true, general = true, concat = true })[self.method] then
            error(self.method .. " is not an appropriate attention method.")
        end
        self.hidden_size = hidden_size
        if self.method == "general" then
            self.attn = nn.Linear(self.hidden_size, hidden_size)
        elseif self.method == "concat" then
            self.attn = nn.Linear(self.hidden_size * 2, hidden_size)
            -- self.v = nn.Parameter(torch.FloatTensor(hidden_size))
            self.v = nn.Parameter(tide.FloatTensor(hidden_size))
        end
    end

    function Attn:dot_score(hidden, encoder_output)
        -- return torch.sum(hidden * encoder_output, dim=2)
        return tide.sum(hidden * encoder_output, { dim = 3 })
    end

    function Attn:general_score(hidden, encoder_output)
        local energy = self.attn(encoder_output)
        return tide.sum(hidden * energy, { dim = 3 })
    end

    function Attn:concat_score(hidden, encoder_output)
        -- energy = self.attn(torch.cat((hidden.expand(encoder_output.size(0), -1, -1), encoder_output), 2)).tanh()
        local energy = self.attn(tide.cat({ hidden:expand(encoder_output:size(1), -1, -1), encoder_output }, 3)):tanh()
        return tide.sum(self.v * energy, { dim = 3 })
    end

    function Attn:forward(hidden, encoder_outputs)
        local attn_energies
        if self.method == "general" then
            attn_energies = self:general_score(hidden, encoder_outputs)
        elseif self.method == "concat" then
            attn_energies = self:concat_score(hidden, encoder_outputs)
        elseif self.method == "dot" then
            attn_energies = self:dot_score(hidden, encoder_outputs)
        end

        attn_energies = attn_energies:t()

        -- return F.softmax(attn_energies, dim=1).unsqueeze(1)
        return F.softmax(attn_energies, { dim = 2 }):unsqueeze(2)
    end

    -- class LuongAttnDecoderRNN(nn.Module):
    local LuongAttnDecoderRNN = nn.Module:extend("LuongAttnDecoderRNN")
    function LuongAttnDecoderRNN:init(attn_model, embedding, hidden_size, output_size, n_layers, dropout)
        n_layers = n_layers or 1
        dropout = dropout or 0.1
        self.attn_model = attn_model
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.n_layers = n_layers
        self.dropout = dropout

        self.embedding = embedding
        self.embedding_dropout = nn.Dropout(dropout)
        -- self.gru = nn.GRU(hidden_size, hidden_size, n_layers, dropout=(0 if n_layers == 1 else dropout))
        self.gru = nn.GRU(hidden_size, hidden_size, n_layers, { dropout = (n_layers == 1 and 0 or dropout) })
        self.concat = nn.Linear(hidden_size * 2, hidden_size)
        self.out = nn.Linear(hidden_size, output_size)

        self.attn = Attn(attn_model, hidden_size)
    end

    function LuongAttnDecoderRNN:forward(input_step, last_hidden, encoder_outputs)
        local embedded = self.embedding(input_step)
        embedded = self.embedding_dropout(embedded)
        local rnn_output, hidden = self.gru(embedded, last_hidden)
        local attn_weights = self.attn(rnn_output, encoder_outputs)
        -- context = attn_weights.bmm(encoder_outputs.transpose(0, 1))
        local context = attn_weights:bmm(encoder_outputs:transpose(1, 2))
        -- rnn_output = rnn_output.squeeze(0); context = context.squeeze(1)
        rnn_output = rnn_output:squeeze(1)
        context = context:squeeze(2)
        -- concat_input = torch.cat((rnn_output, context), 1)
        local concat_input = tide.cat({ rnn_output, context }, 2)
        local concat_output = tide.tanh(self.concat(concat_input))
        local output = self.out(concat_output)
        -- output = F.softmax(output, dim=1)
        output = F.softmax(output, { dim = 2 })
        return output, hidden
    end

    -- def maskNLLLoss(inp, target, mask):
    local function maskNLLLoss(inp, target, mask)
        local nTotal = mask:sum()
        -- crossEntropy = -torch.log(torch.gather(inp, 1, target.view(-1, 1)).squeeze(1))
        local crossEntropy = -tide.log(tide.gather(inp, 2, target:view(-1, 1)):squeeze(2))
        local loss = crossEntropy:masked_select(mask):mean()
        loss = loss:to(device)
        return loss, nTotal:item()
    end

    local teacher_forcing_ratio = 1.0

    -- def train(input_variable, lengths, target_variable, mask, max_target_len, encoder, decoder, embedding,
    --           encoder_optimizer, decoder_optimizer, batch_size, clip, max_length=MAX_LENGTH):
    local function train(input_variable, lengths, target_variable, mask, max_target_len, encoder, decoder,
                         embedding, encoder_optimizer, decoder_optimizer, batch_size, clip)
        encoder_optimizer:zero_grad()
        decoder_optimizer:zero_grad()

        input_variable = input_variable:to(device)
        lengths = lengths:to(device)
        target_variable = target_variable:to(device)
        mask = mask:to(device)

        local loss = 0
        local print_losses = {}
        local n_totals = 0

        local encoder_outputs, encoder_hidden = encoder(input_variable, lengths)

        -- decoder_input = torch.LongTensor([[SOS_token for _ in range(batch_size)]])
        local sos = {}
        for b = 1, batch_size do sos[b] = SOS_token end
        local decoder_input = tide.LongTensor({ sos })
        decoder_input = decoder_input:to(device)

        -- decoder_hidden = encoder_hidden[:decoder.n_layers]
        local decoder_hidden = encoder_hidden[{ { 1, decoder.n_layers } }]

        -- use_teacher_forcing = True if random.random() < teacher_forcing_ratio else False
        local use_teacher_forcing = math.random() < teacher_forcing_ratio

        local decoder_output
        if use_teacher_forcing then
            for t = 1, max_target_len do
                decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden, encoder_outputs)
                -- decoder_input = target_variable[t].view(1, -1)
                decoder_input = target_variable[t]:view(1, -1)
                local mask_loss, nTotal = maskNLLLoss(decoder_output, target_variable[t], mask[t])
                -- loss += mask_loss
                loss = loss + mask_loss
                print_losses[#print_losses + 1] = mask_loss:item() * nTotal
                n_totals = n_totals + nTotal
            end
        else
            for t = 1, max_target_len do
                decoder_output, decoder_hidden = decoder(decoder_input, decoder_hidden, encoder_outputs)
                -- _, topi = decoder_output.topk(1)
                local _, topi = decoder_output:topk(1)
                -- decoder_input = torch.LongTensor([[topi[i][0] for i in range(batch_size)]])
                local row = {}
                for i = 1, batch_size do row[i] = topi[i][1] end
                decoder_input = tide.LongTensor({ row })
                decoder_input = decoder_input:to(device)
                local mask_loss, nTotal = maskNLLLoss(decoder_output, target_variable[t], mask[t])
                loss = loss + mask_loss
                print_losses[#print_losses + 1] = mask_loss:item() * nTotal
                n_totals = n_totals + nTotal
            end
        end

        loss:backward()

        -- _ = nn.utils.clip_grad_norm_(encoder.parameters(), clip)
        local _ = nn.utils.clip_grad_norm_(encoder:parameters(), clip)
        _ = nn.utils.clip_grad_norm_(decoder:parameters(), clip)

        encoder_optimizer:step()
        decoder_optimizer:step()

        -- return sum(print_losses) / n_totals
        local s = 0
        for _, l in ipairs(print_losses) do s = s + l end
        return s / n_totals
    end

    -- class GreedySearchDecoder(nn.Module):
    local GreedySearchDecoder = nn.Module:extend("GreedySearchDecoder")
    function GreedySearchDecoder:init(encoder, decoder)
        self.encoder = encoder
        self.decoder = decoder
    end

    function GreedySearchDecoder:forward(input_seq, input_length, max_length)
        local encoder_outputs, encoder_hidden = self.encoder(input_seq, input_length)
        -- decoder_hidden = encoder_hidden[:decoder.n_layers]
        local decoder_hidden = encoder_hidden[{ { 1, self.decoder.n_layers } }]
        -- decoder_input = torch.ones(1, 1, device=device, dtype=torch.long) * SOS_token
        local decoder_input = tide.ones(1, 1, { device = device, dtype = tide.long }) * SOS_token
        -- all_tokens = torch.zeros([0], device=device, dtype=torch.long)
        local all_tokens = tide.zeros({ 0 }, { device = device, dtype = tide.long })
        local all_scores = tide.zeros({ 0 }, { device = device })
        for _ = 1, max_length do
            local decoder_output
            decoder_output, decoder_hidden = self.decoder(decoder_input, decoder_hidden, encoder_outputs)
            -- decoder_scores, decoder_input = torch.max(decoder_output, dim=1)
            local decoder_scores
            decoder_scores, decoder_input = tide.max(decoder_output, { dim = 2 })
            -- all_tokens = torch.cat((all_tokens, decoder_input), dim=0)
            all_tokens = tide.cat({ all_tokens, decoder_input }, { dim = 1 })
            all_scores = tide.cat({ all_scores, decoder_scores }, { dim = 1 })
            -- decoder_input = torch.unsqueeze(decoder_input, 0)
            decoder_input = tide.unsqueeze(decoder_input, 1)
        end
        return all_tokens, all_scores
    end

    -- a tiny batch: 3 input sentences (sorted by length, as batch2TrainData sorts them) and replies
    local function batch()
        local inputs = { { 4, 5, 6, 7, EOS_token }, { 8, 5, 9, EOS_token }, { 6, 4, EOS_token } }
        local outputs = { { 9, 8, EOS_token }, { 7, 6, 5, 4, EOS_token }, { 5, EOS_token } }
        local inp, lengths = inputVar(inputs)
        local output, mask, max_target_len = outputVar(outputs)
        return inp, lengths, output, mask, max_target_len
    end

    for _, attn_model in ipairs({ "dot", "general", "concat" }) do
        it("EncoderRNN + LuongAttnDecoderRNN('" .. attn_model .. "'), train() with teacher forcing, greedy search", function()
            tide.manual_seed(7)
            math.randomseed(7)
            local hidden_size, encoder_n_layers, decoder_n_layers, dropout, batch_size = 8, 2, 2, 0.1, 3
            local num_words = 10
            local clip, learning_rate, decoder_learning_ratio = 50.0, 0.01, 5.0

            -- embedding = nn.Embedding(voc.num_words, hidden_size)
            local embedding = nn.Embedding(num_words, hidden_size)
            local encoder = EncoderRNN(hidden_size, embedding, encoder_n_layers, dropout)
            local decoder = LuongAttnDecoderRNN(attn_model, embedding, hidden_size, num_words, decoder_n_layers, dropout)
            if attn_model == "concat" then
                -- torch.FloatTensor(hidden_size) is uninitialized: the script trains it from whatever it holds
                nn.init.normal_(decoder.attn.v, 0, 0.1)
            end
            encoder = encoder:to(device)
            decoder = decoder:to(device)

            encoder:train()
            decoder:train()

            -- encoder_optimizer = optim.Adam(encoder.parameters(), lr=learning_rate)
            local encoder_optimizer = optim.Adam(encoder:parameters(), { lr = learning_rate })
            local decoder_optimizer = optim.Adam(decoder:parameters(), { lr = learning_rate * decoder_learning_ratio })

            local input_variable, lengths, target_variable, mask, max_target_len = batch()
            assert.are.same({ 5, 3 }, input_variable:size())
            assert.are.equal("bool", tostring(mask.dtype):match("bool"))
            local losses = {}
            for iteration = 1, 8 do
                losses[iteration] = train(input_variable, lengths, target_variable, mask, max_target_len,
                    encoder, decoder, embedding, encoder_optimizer, decoder_optimizer, batch_size, clip)
                assert_finite(losses[iteration], "loss")
            end
            assert.is_true(losses[8] < losses[1], "loss " .. losses[1] .. " -> " .. losses[8])

            -- for state in encoder_optimizer.state.values(): for k, v in state.items():
            --     if isinstance(v, torch.Tensor): state[k] = v.cuda()
            for _, state in pairs(encoder_optimizer.state) do
                for k, v in pairs(state) do
                    if isinstance(v, tide.Tensor) then
                        state[k] = v:to(device)
                    end
                end
            end

            -- teacher_forcing_ratio = 0: the decoder feeds its own topk guesses back
            teacher_forcing_ratio = 0
            local l = train(input_variable, lengths, target_variable, mask, max_target_len,
                encoder, decoder, embedding, encoder_optimizer, decoder_optimizer, batch_size, clip)
            assert_finite(l, "loss without teacher forcing")
            teacher_forcing_ratio = 1.0

            encoder:eval()
            decoder:eval()
            local searcher = GreedySearchDecoder(encoder, decoder)
            -- evaluate(): indexes_batch = [indexesFromSentence(voc, sentence)]
            local indexes_batch = { { 4, 5, 6, EOS_token } }
            -- lengths = torch.tensor([len(indexes) for indexes in indexes_batch])
            local lens = tide.tensor({ #indexes_batch[1] })
            -- input_batch = torch.LongTensor(indexes_batch).transpose(0, 1)
            local input_batch = tide.LongTensor(indexes_batch):transpose(1, 2)
            local tokens, scores = searcher(input_batch, lens, MAX_LENGTH)
            assert.are.same({ MAX_LENGTH }, tokens:size())
            assert.are.same({ MAX_LENGTH }, scores:size())
            -- decoded_words = [voc.index2word[token.item()] for token in tokens]
            for _, token in ipairs(tokens:unbind()) do
                local w = token:item()
                assert.is_true(w >= 1 and w <= num_words)
            end
            assert.is_true(scores:gt(0):all():item() and scores:le(1):all():item())
        end)
    end
end)
