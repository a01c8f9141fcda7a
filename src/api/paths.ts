export const API_PREFIX = "/api/v0.1";
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;
