export PATH="$PWD/bin:$PATH"
export GREETING="hello"
