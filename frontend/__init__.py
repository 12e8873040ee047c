"""From torch to mlc: the FX importer and the torch.compile backend."""
