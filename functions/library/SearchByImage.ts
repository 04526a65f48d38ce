import { galleryHandlers } from '../../shared/galleries/handlers.ts'

export default galleryHandlers('face').searchByImage
