import { API_PREFIX } from "../http/groups.ts";

export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;
