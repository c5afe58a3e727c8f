--- tide.data.get_worker_info(): PyTorch's, which gives a DataLoader worker process its id and
-- its copy of the dataset (so an IterableDataset can split its stream among workers) and nil
-- in the main process. tide's DataLoader has no worker processes (no num_workers): every
-- dataset is read in the calling process, so this always returns nil, and an IterableDataset
-- written for PyTorch's workers takes its single-process branch.
return function()
    return nil
end
