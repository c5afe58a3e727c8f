--- tide.data: datasets, batching, and the Fashion-MNIST reader.
--
--     local data = require("tide.data")   -- also tide.data
--     local train, test, classes = data.fashion_mnist("/usr/share/datasets/fashion-mnist")
--     for x, y in data.DataLoader(train, {batch_size = 128, shuffle = true}):iter() do ... end

return {
    Dataset = require("tide.data.Dataset"),
    TensorDataset = require("tide.data.TensorDataset"),
    DataLoader = require("tide.data.DataLoader"),
    DistributedSampler = require("tide.data.DistributedSampler"),
    fashion_mnist = require("tide.data.fashion_mnist"),
    Subset = require("tide.data.Subset"),
    random_split = require("tide.data.random_split"),
    ConcatDataset = require("tide.data.ConcatDataset"),
    IterableDataset = require("tide.data.IterableDataset"),
    ChainDataset = require("tide.data.ChainDataset"),
    get_worker_info = require("tide.data.get_worker_info"),
    WeightedRandomSampler = require("tide.data.WeightedRandomSampler"),
    SequentialSampler = require("tide.data.SequentialSampler"),
    RandomSampler = require("tide.data.RandomSampler"),
    SubsetRandomSampler = require("tide.data.SubsetRandomSampler"),
    BatchSampler = require("tide.data.BatchSampler"),
    default_collate = require("tide.data.collate"),
    default_convert = require("tide.data.default_convert"),
    Sampler = require("tide.data.Sampler"),
    text = require("tide.data.text"),
}
