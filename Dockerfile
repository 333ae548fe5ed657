# loadout in a small static image.
#
#   docker build -t loadout --build-arg VERSION=v1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) .
#
# The config is mounted read-only at /config/loadout.json; skill folders it
# names must be mounted too (relative roots resolve against /config). The
# SQLite store (skills, tokens, receipts) lives in the /data volume. serve
# refuses a non-loopback address until a token exists, so create one first:
#
#   docker volume create loadout-data
#   docker run --rm -v loadout-data:/data -v "$PWD/config:/config:ro" loadout token create --scope admin --name ops
#   docker run -d -p 7777:7777 -v loadout-data:/data -v "$PWD/config:/config:ro" loadout
#
# The build recipe (the RUN ... go build line) is run by the test
# TestDockerfileRecipe in cmd/loadout, which checks the binary is static
# and starts, so the recipe is tested where Docker is not available.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Without .git in the context the toolchain cannot stamp the commit, so it
# comes in as build arguments (loadout version prints them).
ARG VERSION=
ARG COMMIT=
# The SQLite driver is pure Go: no cgo, so the binary is static.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.buildVersion=${VERSION} -X main.buildCommit=${COMMIT}" -o /out/loadout ./cmd/loadout
RUN mkdir -p /out/data /out/config

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/loadout /loadout
# Owned by the nonroot user (65532), so a new named volume is writable.
COPY --from=build --chown=65532:65532 /out/data /data
COPY --from=build /out/config /config
ENV LOADOUT_CONFIG=/config/loadout.json \
    LOADOUT_DB=/data/loadout.db
VOLUME ["/data"]
EXPOSE 7777
USER 65532:65532
ENTRYPOINT ["/loadout"]
CMD ["serve", "--addr", "0.0.0.0:7777", "--config", "/config/loadout.json"]
