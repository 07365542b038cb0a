# The one Strata image and binary: -target picks the modules (all = the single process,
# distributor, ingester, querier, compactor). Flags are the container's arguments:
#   docker build -t strata:0.1.0 .
#   docker run strata:0.1.0 -target=querier -server.http-listen-address=0.0.0.0 -querier.ingester-addresses=...
# TypeScript runs through tsx (as `npm start` does), so there is no build step.
FROM node:20-slim
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY libs libs
COPY apps apps
# tsx is a devDependency and is needed at run time: a plain `npm ci`, not --omit=dev.
RUN npm ci --no-audit --no-fund && npm cache clean --force
USER node
ENTRYPOINT ["node", "--import", "tsx", "apps/strata/src/main.ts"]
