# Source this on the GPU machine, from the repository root, before any GPU command:
#   . bench/gpu_setup.sh && python3 -m pytest test/e2e ...
# It installs the wheels carried in .whl/ (xdsl and its two dependencies, lit, filecheck: the GPU
# machine has torch, triton and transformers but no network) into /tmp/site, makes `import mlc`
# resolve to this checkout, and checks that the GPU is visible.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
ln -sfn "$PWD" /tmp/site/mlc
# The torch.compile entry point (backend="mlc"), as `pip install` of the checkout would record it.
mkdir -p /tmp/site/mlc-0.1.0.dist-info
printf 'Metadata-Version: 2.1\nName: mlc\nVersion: 0.1.0\n' > /tmp/site/mlc-0.1.0.dist-info/METADATA
printf '[torch_dynamo_backends]\nmlc = mlc.frontend.backend:mlc_backend\n' > /tmp/site/mlc-0.1.0.dist-info/entry_points.txt
export PYTHONPATH=/tmp/site
export PATH=/tmp/site/bin:$PATH
unset TRITON_INTERPRET
python3 -c 'import mlc, xdsl, torch, triton; assert torch.cuda.is_available(); print("mlc", mlc.__file__, "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
