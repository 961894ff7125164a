# syntax=docker/dockerfile:1
# The raykueue image. In a checkout of this repository:
#   docker build -t raykueue .                   # the image: raykueue and nothing else
#   docker build --target debug -t raykueue:debug .   # the same plus a busybox shell, for GitLab CI
#   docker run --rm -v "$PWD:/work" raykueue check --profile profiles/examples/prod.yaml
# What the README's "Container" section and examples/ci/ run; tests/it/container.rs checks
# that they agree with this file.

# Build: the Rust toolchain pinned by version (the one CI tests with; Cargo.toml's
# rust-version is the oldest that builds), the dependencies exactly as Cargo.lock pins them.
# Bookworm, like the runtime image below: the binary links against the glibc it was built with.
FROM docker.io/library/rust:1.95.0-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked

# For CI systems that run a job's script inside its image (GitLab CI): distroless's debug
# variant adds a busybox shell at /busybox/sh; everything else is as in the image below.
FROM gcr.io/distroless/cc-debian12:debug-nonroot AS debug
COPY --from=build /src/target/release/raykueue /usr/local/bin/raykueue
COPY argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
WORKDIR /work
USER 65532:65532
ENTRYPOINT ["raykueue"]

# The image (the default target): glibc and libgcc for the binary, no shell, no package
# manager. A numeric user, so that Kubernetes' runAsNonRoot can verify it. The Argo CD
# plugin's configuration sits where argocd-cmp-server reads it, so the same image is the
# plugin sidecar (argocd/repo-server-patch.yaml).
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/raykueue /usr/local/bin/raykueue
COPY argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml
WORKDIR /work
USER 65532:65532
ENTRYPOINT ["raykueue"]
