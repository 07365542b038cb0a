// What the modules hand the UI: plain data, rendered generically (a section's
// fields as a list, its rows as a table). The UI knows no module's meaning.

export type StatusValue = string | number | boolean | null;

export interface StatusSection {
  title: string;
  /** One line under the title (why a table is empty, where the data comes from). */
  note?: string;
  fields?: Record<string, StatusValue>;
  /** A table: the columns are the rows' keys, in first-seen order. */
  rows?: Record<string, StatusValue>[];
  links?: UiLink[];
}

export interface UiLink {
  label: string;
  href: string;
}

/** One status page: a module's state, asked for each time the page is opened or refreshed. */
export interface StatusPage {
  /** URL segment: /ui/status/<id>. */
  id: string;
  title: string;
  /** The module that contributes it (grouped by module on the landing page). */
  module: string;
  sections(): StatusSection[] | Promise<StatusSection[]>;
}

/** What the landing page and the navigation show. */
export interface UiInfo {
  title: string;
  targets: readonly string[];
  modules: readonly string[];
  /** What the modules serve ("push /api/v1/push", "ingester-zone-a-0 on partition 0"). */
  endpoints: readonly string[];
  pages: { id: string; title: string; module: string }[];
  links: UiLink[];
  /** The query page, when a querier runs here. */
  query?: { apiPrefix: string; multitenancy: boolean };
}

export interface StatusAnswer {
  id: string;
  title: string;
  module: string;
  sections: StatusSection[];
}
