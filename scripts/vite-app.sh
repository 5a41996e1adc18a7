#!/usr/bin/env bash
# The SDK as an embedder installs it: `make sdk`'s package packed into a tarball, installed into
# a Vite + TypeScript app (tests/e2e/vite-app, its own pinned packages), type-checked strictly
# against the package's declarations (skipLibCheck off) and built for production into
# tests/e2e/vite-app/dist, which tests/e2e/client/vite.spec.ts serves and runs.
set -euo pipefail
cd "$(dirname "$0")/.."

tarball=$(npm pack ./target/sdk-pkg --pack-destination target | tail -1)
cd tests/e2e/vite-app
# Not saved into the app's lock file: the tarball is this build's, its hash changes each time.
npm install --no-save --no-audit --no-fund "../../../target/$tarball"
npm run build
